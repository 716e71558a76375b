/** A path or option the caller got wrong (no such folder, a file outside the index): reported plainly, exit 1. */
export class RepositoryError extends Error {}

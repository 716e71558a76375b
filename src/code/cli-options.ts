/** Option parsing shared by the code-search commands (search, find-related, code-index). */
import { UsageError, UserError } from "../cli/command.ts";
import { RepositoryError } from "./errors.ts";

/** Runs `make`, turning the core's RepositoryError (a bad path or option) into a clear exit-1 error. */
export function checked<T>(make: () => T): T {
  const rethrow = (error: unknown): never => {
    if (error instanceof RepositoryError) throw new UserError(error.message);
    throw error;
  };
  try {
    const value = make();
    return (value instanceof Promise ? value.catch(rethrow) : value) as T;
  } catch (error) {
    return rethrow(error);
  }
}

export function positiveInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a whole number of 1 or more, not '${value}'`);
  return n;
}

export function nonNegativeInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError(`${flag} must be a whole number of 0 or more, not '${value}'`);
  return n;
}

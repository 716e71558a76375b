/**
 * Path penalties: a multiplier for a file's chunks by what its path says it is — tests, examples,
 * vendored and generated code, re-export barrels, type stubs, a C header beside its `.c`.
 */
import { tuned } from "./tuning.ts";

/** Tests, examples, docs code, compatibility shims and vendored copies: rarely the answer. */
export const STRONG_PATH_PENALTY = 0.3;
/**
 * Re-export barrels and package metadata (`__init__.py`, `package-info.java`). Rust's `mod.rs` and
 * JavaScript's `index.js` are not here: they often hold the main definitions (axum's `Router`).
 */
const MODERATE_PATH_PENALTY = 0.5;
/** Type declaration stubs (`.d.ts`) still carry useful signatures. */
const MILD_PATH_PENALTY = 0.7;
/**
 * A C header beside the `.c` file of the same name (`transfer.h` next to `transfer.c`) declares
 * what that file defines: the behaviour a question asks about is in the `.c`. Only C pairs: a C++
 * header (`str_cat.h` beside `str_cat.cc`) holds templates, inline code and the API's comments.
 */
const C_DECLARATION_PENALTY = 0.5;

const TEST_FILE =
  /(^|\/)(test_[^/]*\.py|[^/]*_test\.(py|go|rb|c|cc|cpp|h|hpp|lua|dart|exs?)|[^/]*_spec\.(rb|lua)|[^/]*\.(test|spec|bench)\.[cm]?[jt]sx?|[^/]*Tests?\.(java|kt|swift|cs|php|scala)|[^/]*(Spec|Suite)\.(kt|swift|scala)|[^/]*Benchmarks?\.(java|kt|cs|scala|swift)|[^/]*_(benchmark|bench)\.(c|cc|cpp|go|rs|py|zig)|test_[^/]*\.(c|cc|cpp|lua|dart)|test_helpers?[^/]*|conftest\.py)$/;
const TEST_DIR =
  /(^|\/)(tests?|__tests__|spec|specs|testing|testdata|test-data|test_helpers?|test_utils?|testutils?|fixtures|benchmarks?|benches)\//;
/** A folder named as a kind of tests (`integration_test/`, `e2e-tests/`, `unit_tests/`). */
const NAMED_TEST_DIR = /(^|\/)[a-z0-9]+[_-]tests?\//;
const EXAMPLE_DIR = /(^|\/)(_?examples?|samples?|demos?|docs?_src)\//;
const COMPAT_DIR = /(^|\/)(compat|_compat|legacy)\//;
const VENDOR_DIR = /(^|\/)(vendor|vendored|third_party|thirdparty|3rdparty|external|extern|single_include)\//;
/**
 * Built output committed beside the source: `dist/` bundles (each a copy of many source files, so
 * they match every query the source does) and HTML API documentation generated into `docs/`
 * (jazzy, javadoc, doxygen pages that repeat every declaration's name and comment).
 */
const BUILD_OUTPUT = /(^|\/)dist\/|(^|\/)docs?\/(.*\/)?[^/]*\.html?$/;
const GENERATED_FILE = /(\.pb\.(go|cc|h)|_pb2\.py|\.generated\.\w+|\.g\.dart|\.min\.js)$/;
const REEXPORT_FILE = /(^|\/)(__init__\.py|package-info\.java)$/;
const TYPE_STUB = /\.d\.[cm]?ts$/;

/**
 * Multiplier for a file's chunks by what its path says it is; `hasFile` tells whether another path
 * is in the index (a C header's `.c` file).
 */
export function pathPenalty(path: string, hasFile?: (path: string) => boolean): number {
  const strong = tuned("strongPathPenalty", STRONG_PATH_PENALTY);
  let factor = 1;
  if (TEST_FILE.test(path) || TEST_DIR.test(path)) factor *= strong;
  else if (NAMED_TEST_DIR.test(path)) factor *= tuned("namedTestDirPenalty", strong);
  if (EXAMPLE_DIR.test(path)) factor *= strong;
  if (COMPAT_DIR.test(path)) factor *= strong;
  if (VENDOR_DIR.test(path) || GENERATED_FILE.test(path)) factor *= strong;
  if (BUILD_OUTPUT.test(path)) factor *= tuned("buildOutputPenalty", strong);
  if (REEXPORT_FILE.test(path)) factor *= MODERATE_PATH_PENALTY;
  if (TYPE_STUB.test(path)) factor *= MILD_PATH_PENALTY;
  if (path.endsWith(".h") && hasFile?.(`${path.slice(0, -2)}.c`)) factor *= C_DECLARATION_PENALTY;
  return factor;
}

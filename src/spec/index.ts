/**
 * The spec loader's public API: load a tree of spec files (a directory, or any SpecFileSource
 * such as a commit's tree) into a normalised DesiredState, or into every error, and format
 * those errors for people and tools.
 */
export { loadFromDirectory, loadFromSource, DEFAULT_LIMITS, type LoadLimits, type LoadOptions } from './load.js';
export { directorySource, type SpecDirEntry, type SpecEntryKind, type SpecFileSource } from './source.js';
export { SpecSourceError, type SpecErrorCode, type SpecSourceErrorCode } from './errors.js';
export {
  errorsToJson,
  formatErrorGithub,
  formatErrorsGithub,
  formatErrorsText,
  formatErrorText,
  type ErrorFormat,
  type FormatOptions,
} from './format.js';
export { revisionOf } from './revision.js';
/** git check-ref-format's rules for a branch name: what is wrong, or undefined (for --status-branch and the like). */
export { gitBranch as branchNameProblem } from './formats.js';
export { DEFAULT_CONFIG } from './normalise/config.js';
export { BUILTIN_ROLLOUT } from './normalise/rollout.js';
export type * from './model.js';
export { jobNamespaceWarnings, RBAC_JOB_NAMESPACE, writtenNamespaceWarnings } from './namespaces.js';

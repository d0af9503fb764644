/**
 * The Git source's public API: follow a branch, read a commit's specs, apply commits whole or
 * not at all, verify signatures, receive webhooks, poll, and write the status branch.
 */
export { GitSource, type FetchResult, type GitSourceOptions } from './git-source.js';
export { createTreeReader, type TreeEntry, type TreeReader, type TreeReaderOptions } from './tree-reader.js';
export { authorOf, type Authorship, type AuthorshipOptions } from './authorship.js';
export { Sync, type Loader, type SyncOptions, type SyncOutcome } from './sync.js';
export { CommitsInForce, type AppliedCommit, type CommitsView, type DesiredRevision } from './in-force.js';
export {
  StatusWriter,
  DEFAULT_STATUS_BRANCH,
  readRecord,
  readStatusFiles,
  type AppliedRecord,
  type StatusWriterOptions,
  type WriteResult,
  type WriteTimings,
} from './status-writer.js';
export { statusMessage, parseTrailers, SOURCE_TRAILER, CLUSTER_TRAILER } from './trailers.js';
export {
  verifyWebhook,
  webhookHandler,
  DeliveryLog,
  isJsonPayload,
  webhookPlugin,
  webhookSecret,
  type WebhookHeaders,
  type WebhookProvider,
  type WebhookVerdict,
} from './webhook.js';
export { createPoller, durationToCron, parseDuration, type Poller } from './poller.js';
export { coalesce, type Coalescer } from './coalesce.js';
export { loadKeyring, parseKeyring, verifyCommitSignature, type Keyring, type SignatureVerdict } from './signatures.js';
export { resolveCredentials, splitUrlCredentials, type CredentialInputs, type GitCredentials } from './credentials.js';
export { redactText, redactUrl } from './redact.js';
export { GitSourceError, isGitSourceError, type GitSourceErrorCode, type RetryClass } from './errors.js';
export { defaultCacheRoot } from './location.js';

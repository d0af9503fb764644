/** Exit codes shared by every drydock command (DESIGN.md). */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_ERROR = 2;
export type ExitCode = typeof EXIT_OK | typeof EXIT_FINDINGS | typeof EXIT_ERROR;

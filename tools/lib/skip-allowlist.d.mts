export interface AllowedSkip {
  /** Repository-relative test file. */
  file: string;
  /** Matched against the skipped test's full name. */
  name: RegExp;
  /** Applies only when each variable has this value in the suite's environment. */
  env?: Record<string, string>;
  /** The kernel feature (or opt-out) the skip stands for, as the summary prints it. */
  why: string;
}
export const ALLOWED_SKIPS: ReadonlyArray<AllowedSkip>;

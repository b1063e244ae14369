/** Failed sign-ins per email, to slow down guessing (src/auth/sign-in.ts). */
export interface SignInFailures {
  failures(email: string): Promise<{ count: number; lastAt: number } | undefined>;
  recordFailure(email: string, at: number): Promise<void>;
  clearFailures(email: string): Promise<void>;
}

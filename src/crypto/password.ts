/** How every password (an account user's, an operator's) is stored: argon2id. */
export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

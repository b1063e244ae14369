import { escapeHtml } from "@kitajs/html";
import { Notice } from "./components.tsx";
import { BarePage } from "./layout.tsx";

/** Where the form posts and what it says (the dashboard's, or the operator console's). */
export interface SignInWords {
  action: string;
  heading: string;
  footnote: string;
}

export function SignInPage(props: {
  next: string;
  email?: string;
  error?: string;
  signedOut?: boolean;
  words: SignInWords;
}) {
  const { words } = props;
  return (
    <BarePage title="Sign in">
      <h1>{escapeHtml(words.heading)}</h1>
      {props.signedOut ? (
        <Notice tone="ok">
          <p>You are signed out.</p>
        </Notice>
      ) : (
        ""
      )}
      {props.error ? (
        <Notice tone="bad" id="sign-in-error">
          <p safe>{props.error}</p>
        </Notice>
      ) : (
        ""
      )}
      <div class="panel">
        <form method="post" action={words.action} class="stack">
          <input type="hidden" name="next" value={props.next} />
          <div>
            <label for="email">Email</label>
            <input
              type="email"
              id="email"
              name="email"
              required
              autocomplete="username"
              maxlength="320"
              value={props.email}
              autofocus
              aria-describedby={props.error ? "sign-in-error" : undefined}
            />
          </div>
          <div>
            <label for="password">Password</label>
            <input
              type="password"
              id="password"
              name="password"
              required
              autocomplete="current-password"
              maxlength="200"
            />
          </div>
          <div>
            <button type="submit">Sign in</button>
          </div>
        </form>
      </div>
      <p class="muted small">{escapeHtml(words.footnote)}</p>
    </BarePage>
  ) as string;
}

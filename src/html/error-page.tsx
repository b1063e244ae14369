import { escapeHtml } from "@kitajs/html";
import type { AppError } from "../errors/catalog.ts";
import { Notice } from "./components.tsx";
import { htmlResponse } from "./http.ts";
import { BarePage } from "./layout.tsx";

/** Where an error page stands: in the signed-in frame with a way back, or bare with a way to sign in. */
export interface ErrorPlace {
  /** The signed-in frame around a page's title and content; null when nobody is signed in. */
  frame: ((title: string, content: JSX.Element) => string) | null;
  back: { href: string; text: string };
  signIn: string;
}

/** One of our errors as a page (a fragment for htmx), in place of the API's JSON envelope. */
export function errorPage(error: AppError, fragment: boolean, place: ErrorPlace): Response {
  const title = error.status === 404 ? "Not found" : error.status === 403 ? "Not allowed" : "Something went wrong";
  const message = (
    <Notice tone="bad">
      <p safe>{error.message}</p>
    </Notice>
  );
  if (fragment) return htmlResponse(message as string, error.status);
  const body = place.frame ? (
    place.frame(
      title,
      <>
        <h1>{escapeHtml(title)}</h1>
        {message}
        <p>
          <a href={place.back.href}>{escapeHtml(place.back.text)}</a>
        </p>
      </>,
    )
  ) : (
    <BarePage title={title}>
      <h1>{escapeHtml(title)}</h1>
      {message}
      <p>
        <a href={place.signIn}>Sign in</a>
      </p>
    </BarePage>
  );
  return htmlResponse(body as string, error.status);
}

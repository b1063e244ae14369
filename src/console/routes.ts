import { Elysia, t } from "elysia";
import { auditQuery } from "../audit/queries.ts";
import type { Backups } from "../backup/backups.ts";
import { signInRoutes, type SignInDoor } from "../html/sign-in-routes.ts";
import { NUMBER_STATES } from "../numbers/condition.ts";
import { findOperator, OPERATOR_COOKIE, operatorSignIn, operatorSignOut } from "../operators/session.ts";
import type { Deps } from "../deps.ts";
import { usagePageQuery } from "../requests/usage-report.ts";
import {
  addAccountUser,
  checkAccountNumber,
  createAccount,
  listAccounts,
  removeUser,
  resetPassword,
  revokeAccountKey,
  setBilling,
  showAccount,
} from "./account-handlers.tsx";
import { operatorOnly, type ConsoleHandler } from "./guard.ts";
import {
  listNumbers,
  notFound,
  showAudit,
  showBackups,
  showOverview,
  showUsage,
  takeBackup,
} from "./report-handlers.tsx";

/** The operator console's sign-in: operators, their own cookie and sessions. */
function operatorDoor(deps: Deps): SignInDoor {
  return {
    home: "/operator",
    words: {
      action: "/operator/sign-in",
      heading: "Switchboard operator console",
      footnote: "Operators are created on the server with switchboard admin operators create.",
    },
    cookie: OPERATOR_COOKIE,
    signIn: async (email, password, ip) => (await operatorSignIn(deps, email, password, ip)).token,
    isSignedIn: async (token) => (await findOperator(deps, token)) !== null,
    signOut: (token, ip) => operatorSignOut(deps, token, ip),
  };
}

const accountsQuery = t.Object({ q: t.Optional(t.String({ maxLength: 200 })) });
const numbersQuery = t.Object({
  state: t.Optional(
    t.Union([t.Literal(""), t.Literal("unusable"), ...Object.keys(NUMBER_STATES).map((s) => t.Literal(s))]),
  ),
  cause: t.Optional(t.String({ maxLength: 20 })),
  checked: t.Optional(t.String({ maxLength: 64 })),
});
/** The Audit log page's query: the operator API's filters but the object's and the page size. */
const { account_id, actor, action, from, to, cursor } = auditQuery.properties;
const auditPageQuery = t.Object({ account_id, actor, action, from, to, cursor });
const detail = { hide: true };

/**
 * The operator console at /operator (docs/operations.md#the-operator-console): server-rendered pages in the dashboard's frame and
 * under its CSP, over the console's reports and actions (which go through the operator API's
 * operations). Every page needs an operator session. `backups`: this server's (null where the
 * database is not a SQLite file), for the overview and the Backups page.
 */
export function consoleRoutes(deps: Deps, backups: Backups | null) {
  const page = (handler: ConsoleHandler) => operatorOnly(deps, handler);
  const overviewPage = page(showOverview(deps, backups));
  return new Elysia({ prefix: "/operator" })
    .use(signInRoutes(operatorDoor(deps), deps.config.trustedProxies))
    .get("", overviewPage, { detail })
    .get("/", overviewPage, { detail })
    .get("/accounts", page(listAccounts(deps)), { query: accountsQuery, detail })
    .post("/accounts", page(createAccount(deps)), { detail })
    .get("/accounts/:account_id", page(showAccount(deps)), { detail })
    .post("/accounts/:account_id/billing", page(setBilling(deps)), { detail })
    .post("/accounts/:account_id/users", page(addAccountUser(deps)), { detail })
    .post("/accounts/:account_id/users/:user_id/password", page(resetPassword(deps)), { detail })
    .post("/accounts/:account_id/users/:user_id/delete", page(removeUser(deps)), { detail })
    .post("/accounts/:account_id/api-keys/:id/revoke", page(revokeAccountKey(deps)), { detail })
    .post("/accounts/:account_id/numbers/:phone_number_id/check", page(checkAccountNumber(deps)), { detail })
    .get("/numbers", page(listNumbers(deps)), { query: numbersQuery, detail })
    .get("/usage", page(showUsage(deps)), { query: usagePageQuery, detail })
    .get("/audit", page(showAudit(deps)), { query: auditPageQuery, detail })
    .get("/backups", page(showBackups(deps, backups)), { detail })
    .post("/backups", page(takeBackup(deps, backups)), { detail })
    .get("/*", page(notFound), { detail });
}

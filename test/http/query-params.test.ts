import { describe, expect, test } from "bun:test";
import type { ErrorEnvelope } from "../support/api-json.ts";
import { appWithAccount } from "../webhooks/support.ts";

// Issue 26, follow-up: numeric query parameters have bounds (error codes are int32 upstream, a
// status three digits, a page and an hour count small), past which they are 400 in words on both
// backends; the dashboard's pages read their query without a schema, and garbage there (numbers
// past an integer column or 2^63, a parameter given twice, long text) is ignored or a 4xx, never
// a 5xx.

const my = appWithAccount();

const PAST_INT32 = "2147483648";
const TEN_DIGITS = "9999999999";
const PAST_2_63 = "9223372036854775808";
const HUGE = "99999999999999999999999";

describe("numeric query parameters of the API", () => {
  test.each([
    ["/api/requests", "error_code", [PAST_INT32, TEN_DIGITS, PAST_2_63, HUGE, "-1"]],
    ["/api/requests", "limit", ["0", "201", PAST_2_63, HUGE]],
    ["/api/deliveries", "last_status", ["99", "600", PAST_INT32, PAST_2_63, HUGE]],
    ["/api/deliveries", "limit", ["0", "201", PAST_2_63, HUGE]],
  ])("%s?%s= past its bounds is 400 naming it", async (path, name, values) => {
    for (const value of values) {
      const r = await my.a.api<ErrorEnvelope>("GET", `${path}?${name}=${value}`);
      expect({ value, status: r.status, code: r.body.error?.code }).toEqual({
        value,
        status: 400,
        code: "invalid_request",
      });
      expect(r.body.error.message).toStartWith(`query parameter ${name}:`);
    }
  });

  test("an endpoint's stats take up to a week of hours", async () => {
    const endpoint = (await my.a.endpoint("http://127.0.0.1:9/stats")).id;
    for (const hours of ["0", "169", PAST_INT32, PAST_2_63, HUGE]) {
      const r = await my.a.api<ErrorEnvelope>("GET", `/api/endpoints/${endpoint}/stats?hours=${hours}`);
      expect({ hours, status: r.status }).toEqual({ hours, status: 400 });
      expect(r.body.error.message).toStartWith("query parameter hours:");
    }
    expect((await my.a.api("GET", `/api/endpoints/${endpoint}/stats?hours=168`)).status).toBe(200);
  });

  test("the largest error code an integer column holds is still a filter", async () => {
    expect((await my.a.api("GET", "/api/requests?error_code=2147483647")).status).toBe(200);
  });
});

describe("the dashboard's query parameters", () => {
  const GARBAGE = [PAST_INT32, TEN_DIGITS, PAST_2_63, HUGE, "-1", "1.5", "NaN", "x".repeat(8000), "%", "a'b\"c<d>"];
  const PAGES: [string, string[]][] = [
    ["/dashboard/requests", ["error_code", "number", "status", "api_key_id", "from", "to", "cursor"]],
    ["/dashboard/requests/lookup", ["id"]],
    ["/dashboard/messages/lookup", ["id"]],
    [
      "/dashboard/deliveries",
      ["last_status", "endpoint_id", "status", "field", "number", "message_id", "from", "to", "cursor"],
    ],
    ["/dashboard/api-keys", ["revoked"]],
    ["/dashboard/numbers", ["number", "done"]],
    ["/dashboard/endpoints", ["done"]],
    ["/dashboard/settings", ["saved"]],
  ];
  const get = (url: string) => fetch(url, { headers: { cookie: my.a.sessionCookie() }, redirect: "manual" });

  test.each(PAGES)(
    "%s: garbage, numbers past a column and a parameter given twice are never a 5xx",
    async (path, names) => {
      const failures: string[] = [];
      for (const name of names) {
        const urls = [
          ...GARBAGE.map((v) => `${my.app.url}${path}?${name}=${encodeURIComponent(v)}`),
          `${my.app.url}${path}?${name}=1&${name}=2`,
          `${my.app.url}${path}?${name}[]=1&${name}[a]=2`,
        ];
        for (const url of urls) {
          const r = await get(url);
          await r.arrayBuffer();
          if (r.status >= 500) failures.push(`${url.slice(my.app.url.length, 120)}: ${r.status}`);
        }
      }
      expect(failures).toEqual([]);
    },
  );
});

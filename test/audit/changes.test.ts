import { expect, test } from "bun:test";
import { changesOf, isSecret, removedOf } from "../../src/audit/changes.ts";

test("only what a patch changes, under the API's names, times as ISO text; bookkeeping and ids left out", () => {
  const before = { id: "ep_1", accountId: "acc_1", url: "https://a.example/", fields: ["messages"], warnedAt: null };
  const patch = {
    url: "https://b.example/",
    fields: ["messages"],
    warnedAt: Date.UTC(2026, 0, 2),
    updatedAt: 5,
    phoneNumberId: undefined,
  };
  expect(changesOf(before, patch)).toEqual({
    url: ["https://a.example/", "https://b.example/"],
    warned_at: [null, "2026-01-02T00:00:00.000Z"],
  });
  expect(changesOf(null, { id: "key_1", accountId: "acc_1", mode: "live", name: null, createdAt: 1 })).toEqual({
    mode: [null, "live"],
  });
});

test("a secret is never shown: a changed one is named as changed, as is its removal or first setting", () => {
  for (const field of [
    "secret",
    "previousSecret",
    "accessToken",
    "appSecret",
    "keyHash",
    "passwordHash",
    "pin",
    "code",
  ])
    expect(isSecret(field)).toBe(true);
  for (const field of ["causeCode", "previousSecretExpiresAt", "tokenExpiresAt", "prefix", "keyId"])
    expect(isSecret(field)).toBe(false);
  expect(
    changesOf(
      { accessToken: "EAAG-old", appSecret: "s-old", secret: "whsec_same" },
      { accessToken: "EAAG-new", appSecret: null, secret: "whsec_same", pin: "123456" },
    ),
  ).toEqual({
    access_token: ["[secret]", "[secret changed]"],
    app_secret: ["[secret]", null],
    pin: [null, "[secret changed]"],
  });
});

test("a record removed: what it had, as [before, null], without its secrets", () => {
  expect(
    removedOf({ id: "ep_1", url: "https://a.example/", secret: "whsec_x", previousSecret: null, enabled: false }),
  ).toEqual({ url: ["https://a.example/", null], enabled: [false, null] });
});

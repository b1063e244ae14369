/** What the benches' upstream answers a message send with, and its headers (bench/proxy/upstream.ts, steps.ts). */
export const SEND_ANSWER = JSON.stringify({
  messaging_product: "chat",
  contacts: [{ input: "15550100", wa_id: "15550100" }],
  messages: [{ id: "wamid.HBgLMTU1NTAxMDAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA" }],
});
export const SEND_HEADERS = {
  "content-type": "application/json",
  "x-upstream-trace-id": "AbCdEfGh123",
  "x-app-usage": '{"call_count":1,"total_cputime":1,"total_time":1}',
};

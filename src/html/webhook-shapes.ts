import type { attemptView, deliveryView, endpointView, statsView } from "../webhooks/views.ts";

/**
 * The webhook API's JSON shapes (docs/operations.md#the-dashboard-and-its-api) that the endpoint and delivery pages
 * render. The pages take exactly what the API answers, so a page and its API call can never show different things.
 */
export type EndpointShape = ReturnType<typeof endpointView>;
export type DeliveryShape = ReturnType<typeof deliveryView>;
export type AttemptShape = ReturnType<typeof attemptView>;
/** One hour of an endpoint's deliveries, as GET /api/endpoints/{id}/stats answers it. */
export type HourBucket = ReturnType<typeof statsView>;

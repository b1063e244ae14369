import type { accountNumberView } from "../../src/account-api/views.ts";
import type { ErrorEnvelope } from "../../src/errors/catalog.ts";
import type { CoexistenceView } from "../../src/onboarding/coexistence.ts";
import type { SignupView } from "../../src/onboarding/signup.ts";
import type { attemptView, deliveryView, endpointView, statsView } from "../../src/webhooks/views.ts";

/**
 * The JSON of the account API's answers, typed by the views that write it: a test names what it
 * reads (`a.api<DeliveryDetailJson>(…)`), and an answer of another shape fails its assertions.
 */
export type { ErrorEnvelope, SignupView };
export type EndpointJson = ReturnType<typeof endpointView>;
/** An endpoint as its creation answers it: with its secret, shown this once. */
export type NewEndpointJson = EndpointJson & { secret: string };
export type DeliveryJson = ReturnType<typeof deliveryView> & { about: string };
export type AttemptJson = ReturnType<typeof attemptView>;
export type DeliveryDetailJson = ReturnType<typeof deliveryView> & { attempts: AttemptJson[]; payload: string | null };
export type StatsJson = { hours: number; data: ReturnType<typeof statsView>[] };
export type ListJson<T> = { data: T[] };
/** A page of a list that pages. */
export type PageJson<T> = ListJson<T> & { next_cursor: string | null };
export type NumberJson = ReturnType<typeof accountNumberView>;
export type CoexistenceJson = CoexistenceView;

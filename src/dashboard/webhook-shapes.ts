/**
 * The webhook API's JSON shapes (CONTRACT 4) that the endpoint and delivery pages render. The pages
 * take exactly what the API answers, so a page and its API call can never show different things.
 */
export interface EndpointShape {
  id: string;
  url: string;
  fields: string[];
  phone_number_id: string | null;
  enabled: boolean;
  disabled_reason: "consecutive_failures" | "gone" | null;
  consecutive_failures: number;
  last_success_at: string | null;
  previous_secret_expires_at: string | null;
  created_at: string | null;
}

export interface DeliveryShape {
  id: string;
  endpoint_id: string;
  status: "pending" | "succeeded" | "parked";
  attempt_count: number;
  next_attempt_at: string | null;
  parked_reason: "attempts_exhausted" | "gone" | "endpoint_disabled" | "payload_missing" | null;
  replay_of: string | null;
  fields: string[];
  is_test: boolean;
  payload_available: boolean;
  created_at: string | null;
}

export interface AttemptShape {
  number: number;
  at: string | null;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
}

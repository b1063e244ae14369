/** The fetch the service uses to talk outward (upstream platform, webhook receivers). */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

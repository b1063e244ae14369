import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { PhoneNumber } from "../store/types.ts";
import * as deliveries from "../webhooks/deliveries.ts";
import * as endpoints from "../webhooks/endpoints.ts";
import { EVENT_FIELDS } from "../webhooks/fields.ts";
import { latestRecover, recoveryView, startRecover } from "../webhooks/recover.ts";
import type { RelayHandle } from "../webhooks/relay.ts";
import { createEndpointBody } from "../webhooks/schemas.ts";
import { endpointView, statsView } from "../webhooks/views.ts";
import { Notice } from "../html/components.tsx";
import { testResult } from "./delivery-pages.tsx";
import { utcField } from "../html/format.ts";
import { formFields, readForm } from "../html/form.ts";
import { guarded, page, pathId, type PageHandler, type Viewer } from "./guard.tsx";
import { htmlResponse, isHtmx, seeOther } from "../html/http.ts";
import { EndpointPage, type ShownSecret } from "./pages/endpoint.tsx";
import { EditEndpointPage, type EndpointFormValues, NewEndpointPage } from "./pages/endpoint-form.tsx";
import { EndpointsPage } from "./pages/endpoints.tsx";
import { RecoverSection } from "./pages/recover.tsx";
import { VerifyOutcome } from "./pages/verify.tsx";
import { verifyEndpoint } from "../webhooks/verify.ts";

const numberLabel = (n: PhoneNumber) =>
  `${n.displayPhoneNumber ?? n.phoneNumberId}${n.verifiedName ? ` (${n.verifiedName})` : ""}`;

/** Which form field an error of the endpoint operations belongs to. */
const FIELD_OF_ERROR: Partial<Record<string, keyof EndpointFormValues>> = {
  invalid_url: "url",
  invalid_fields: "fields",
  invalid_request: "phone_number_id",
};

/** What is wrong with a posted add or edit form, to show on the form again. */
interface FormFailure {
  errors: Record<string, string>;
  message?: string;
  status: number;
  noNumbers?: boolean;
}

/** The form did not parse: each field's error under it; "no event ticked" in the page's own words. */
const invalidForm = (errors: Record<string, string>): FormFailure => ({
  errors: errors.fields ? { ...errors, fields: "Choose at least one event." } : errors,
  status: 400,
});

/** The operation refused: under the field it concerns, or above the form. */
function refusal(error: AppError): FormFailure {
  const field = FIELD_OF_ERROR[error.errorName];
  return {
    ...(field ? { errors: { [field]: error.message } } : { errors: {}, message: error.message }),
    status: error.status,
    noNumbers: error.errorName === "no_numbers",
  };
}

/** The add/edit form as posted; "All numbers" arrives as an empty value, which means null. */
function readEndpointForm(body: unknown) {
  const form = readForm(createEndpointBody, body, ["fields"]);
  const raw = form.ok ? form.value : form.raw;
  const values: EndpointFormValues = {
    url: typeof raw.url === "string" ? raw.url : "",
    fields: Array.isArray(raw.fields) ? raw.fields.filter((f): f is string => typeof f === "string") : [],
    phone_number_id: typeof raw.phone_number_id === "string" ? raw.phone_number_id : null,
    signature: raw.signature === "platform" ? "platform" : "standard",
    verify_token: typeof raw.verify_token === "string" ? raw.verify_token : "",
  };
  return { form, values };
}

/** What the endpoint pages work with: the service's parts and the relay's (URL rules, queue, client). */
type PageDeps = Deps & {
  urlRules: RelayHandle["urlRules"];
  queue: RelayHandle["dispatcher"];
  client: RelayHandle["client"];
};

const choices = (deps: Deps, accountId: string) =>
  deps.store.directory.numbers(accountId).map((n) => ({ phone_number_id: n.phoneNumberId, label: numberLabel(n) }));

const hours = async (deps: Deps, accountId: string, id: string) =>
  (await deliveries.endpointStats(deps, accountId, id, 24)).map(statsView);

async function latestRecovery(deps: Deps, accountId: string, id: string) {
  const r = await latestRecover(deps, accountId, id);
  return r && recoveryView(r);
}

async function endpointPage(
  deps: Deps,
  viewer: Viewer,
  id: string,
  extra: { secret?: ShownSecret; flash?: JSX.Element } = {},
  status = 200,
) {
  const endpoint = endpointView(await endpoints.mustEndpoint(deps, viewer.accountId, id));
  return htmlResponse(
    page(
      viewer,
      "Endpoint",
      "endpoints",
      EndpointPage({
        endpoint,
        hours: await hours(deps, viewer.accountId, id),
        numbers: choices(deps, viewer.accountId),
        now: deps.clock.now(),
        recovery: await latestRecovery(deps, viewer.accountId, id),
        ...extra,
      }),
    ),
    status,
  );
}

/** The add form (`id` null) or an endpoint's edit form, with what was posted and what was wrong. */
function formPage(
  deps: Deps,
  viewer: Viewer,
  id: string | null,
  values: EndpointFormValues,
  failure?: Omit<FormFailure, "status">,
) {
  const props = {
    action: id === null ? "/dashboard/endpoints" : `/dashboard/endpoints/${encodeURIComponent(id)}/edit`,
    submit: id === null ? "Add endpoint" : "Save changes",
    values,
    numbers: choices(deps, viewer.accountId),
    fieldNames: EVENT_FIELDS,
    errors: failure?.errors,
    message: failure?.message,
  };
  return id === null
    ? page(viewer, "Add endpoint", "endpoints", NewEndpointPage({ ...props, noNumbers: failure?.noNumbers ?? false }))
    : page(viewer, "Edit endpoint", "endpoints", EditEndpointPage(props));
}

/** A posted add or edit form: saved and answered by `save`, or shown again with what is wrong. */
async function submitForm(
  deps: Deps,
  viewer: Viewer,
  id: string | null,
  body: unknown,
  save: (
    input: Required<Pick<endpoints.EndpointInput, "url" | "fields">> & endpoints.EndpointInput,
  ) => Promise<Response>,
) {
  const { form, values } = readEndpointForm(body);
  const again = (failure: FormFailure) => htmlResponse(formPage(deps, viewer, id, values, failure), failure.status);
  if (!form.ok) return again(invalidForm(form.errors));
  try {
    // An empty token field leaves the token as it is.
    const { verify_token, ...rest } = values;
    return await save({ ...rest, ...(verify_token ? { verify_token } : {}) });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return again(refusal(error));
  }
}

const listEndpoints =
  (deps: Deps): PageHandler =>
  async ({ query }, viewer) => {
    const list = await deps.store.endpoints.ofAccount(viewer.accountId);
    const rows = await Promise.all(
      list.map(async (e) => ({ endpoint: endpointView(e), hours: await hours(deps, viewer.accountId, e.id) })),
    );
    const flash =
      query.done === "deleted" ? (
        <Notice tone="ok">
          <p>The endpoint is deleted.</p>
        </Notice>
      ) : undefined;
    return page(
      viewer,
      "Endpoints",
      "endpoints",
      EndpointsPage({ endpoints: rows, numbers: choices(deps, viewer.accountId), now: deps.clock.now(), flash }),
    );
  };

const newEndpointForm =
  (deps: Deps): PageHandler =>
  (_ctx, viewer) =>
    formPage(deps, viewer, null, {
      url: "",
      fields: ["messages"],
      phone_number_id: null,
      signature: "standard",
      verify_token: "",
    });

const addEndpoint =
  (deps: PageDeps): PageHandler =>
  ({ body }, viewer) =>
    submitForm(deps, viewer, null, body, async (input) => {
      const endpoint = await endpoints.createEndpoint(deps, viewer.accountId, input, viewer.by);
      // Answered directly (no redirect): the secret exists only in this response.
      return endpointPage(deps, viewer, endpoint.id, { secret: { secret: endpoint.secret, rotated: false } }, 201);
    });

const showEndpoint =
  (deps: Deps): PageHandler =>
  ({ params, query }, viewer) => {
    const flash =
      query.done === "enabled" ? (
        <Notice tone="ok">
          <p>
            The endpoint is enabled and its failure count reset. Parked deliveries stay parked: replay the ones you
            need.
          </p>
        </Notice>
      ) : query.done === "saved" ? (
        <Notice tone="ok">
          <p>Changes saved.</p>
        </Notice>
      ) : undefined;
    return endpointPage(deps, viewer, pathId(params), { flash });
  };

const editEndpointForm =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) => {
    const e = endpointView(await endpoints.mustEndpoint(deps, viewer.accountId, pathId(params)));
    return formPage(deps, viewer, e.id, {
      url: e.url,
      fields: e.fields,
      phone_number_id: e.phone_number_id,
      signature: e.signature,
      verify_token: "",
    });
  };

const editEndpoint =
  (deps: PageDeps): PageHandler =>
  async ({ params, body }, viewer) => {
    const id = pathId(params);
    await endpoints.mustEndpoint(deps, viewer.accountId, id);
    return submitForm(deps, viewer, id, body, async (input) => {
      await endpoints.updateEndpoint(deps, viewer.accountId, id, input, viewer.by);
      return seeOther(`/dashboard/endpoints/${encodeURIComponent(id)}?done=saved`);
    });
  };

const deleteEndpoint =
  (deps: PageDeps): PageHandler =>
  async ({ params }, viewer) => {
    await endpoints.deleteEndpoint(deps, viewer.accountId, pathId(params), viewer.by);
    return seeOther("/dashboard/endpoints?done=deleted");
  };

const enableEndpoint =
  (deps: PageDeps): PageHandler =>
  async ({ params }, viewer) => {
    const e = await endpoints.enableEndpoint(deps, viewer.accountId, pathId(params), viewer.by);
    return seeOther(`/dashboard/endpoints/${encodeURIComponent(e.id)}?done=enabled`);
  };

const rotateSecret =
  (deps: PageDeps): PageHandler =>
  async ({ params }, viewer) => {
    const { secret, endpoint } = await endpoints.rotateSecret(deps, viewer.accountId, pathId(params), viewer.by);
    return endpointPage(deps, viewer, endpoint.id, { secret: { secret, rotated: true } });
  };

const recoverSection =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) =>
    htmlResponse(
      RecoverSection({
        endpointId: pathId(params),
        recovery: await latestRecovery(deps, viewer.accountId, pathId(params)),
        now: deps.clock.now(),
      }) as string,
    );

const recover =
  (deps: PageDeps): PageHandler =>
  async ({ params, body }, viewer) => {
    const { since } = formFields(body);
    const from = utcField(typeof since === "string" ? since : undefined) ?? "";
    try {
      await startRecover(deps, viewer.accountId, pathId(params), from, viewer.by);
    } catch (error) {
      if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
      return endpointPage(
        deps,
        viewer,
        pathId(params),
        {
          flash: (
            <Notice tone="warn">
              <p>Give the time to recover from.</p>
            </Notice>
          ),
        },
        400,
      );
    }
    return seeOther(`/dashboard/endpoints/${encodeURIComponent(pathId(params))}#recover`);
  };

const sendTest =
  (deps: PageDeps): PageHandler =>
  async ({ params, request, body }, viewer) => {
    const { field } = formFields(body);
    const deliveryId = await endpoints.sendTest(
      deps,
      viewer.accountId,
      pathId(params),
      typeof field === "string" && field !== "" ? field : undefined,
    );
    return isHtmx(request)
      ? testResult(deps, viewer, deliveryId)
      : seeOther(`/dashboard/deliveries/${encodeURIComponent(deliveryId)}`);
  };

const verify =
  (deps: PageDeps): PageHandler =>
  async ({ params, request }, viewer) => {
    let flash: JSX.Element;
    try {
      flash = <VerifyOutcome result={await verifyEndpoint(deps, viewer.accountId, pathId(params))} />;
    } catch (error) {
      if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
      flash = (
        <Notice tone="warn">
          <p safe>{error.message}</p>
        </Notice>
      );
    }
    return isHtmx(request) ? htmlResponse(flash as string) : endpointPage(deps, viewer, pathId(params), { flash });
  };

const detail = { hide: true };

/**
 * Endpoint pages: thin handlers over the relay's own plain functions (webhooks/endpoints.ts) and its
 * views, the same ones the API answers with.
 */
export function endpointPages(deps: Deps, relay: RelayHandle) {
  const d: PageDeps = { ...deps, urlRules: relay.urlRules, queue: relay.dispatcher, client: relay.client };
  return new Elysia()
    .get("/endpoints", guarded(deps, listEndpoints(d)), { detail })
    .get("/endpoints/new", guarded(deps, newEndpointForm(d)), { detail })
    .post("/endpoints", guarded(deps, addEndpoint(d)), { detail })
    .get("/endpoints/:id", guarded(deps, showEndpoint(d)), { detail })
    .get("/endpoints/:id/edit", guarded(deps, editEndpointForm(d)), { detail })
    .post("/endpoints/:id/edit", guarded(deps, editEndpoint(d)), { detail })
    .post("/endpoints/:id/delete", guarded(deps, deleteEndpoint(d)), { detail })
    .post("/endpoints/:id/enable", guarded(deps, enableEndpoint(d)), { detail })
    .post("/endpoints/:id/rotate-secret", guarded(deps, rotateSecret(d)), { detail })
    .get("/endpoints/:id/recover", guarded(deps, recoverSection(d)), { detail })
    .post("/endpoints/:id/recover", guarded(deps, recover(d)), { detail })
    .post("/endpoints/:id/test", guarded(deps, sendTest(d)), { detail })
    .post("/endpoints/:id/verify", guarded(deps, verify(d)), { detail });
}

import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { PhoneNumber } from "../store/types.ts";
import type { DeliveryStatus } from "../store/history.ts";
import * as deliveries from "../webhooks/deliveries.ts";
import * as endpoints from "../webhooks/endpoints.ts";
import { latestRecover, recoveryView, startRecover } from "../webhooks/recover.ts";
import { EVENT_FIELDS } from "../webhooks/fields.ts";
import { createEndpointBody } from "../webhooks/schemas.ts";
import { attemptView, deliveryView, endpointView, statsView } from "../webhooks/views.ts";
import type { RelayHandle } from "../webhooks/relay.ts";
import { Notice } from "./components.tsx";
import { utcField } from "./format.ts";
import { formFields, readForm } from "./form.ts";
import { guarded, page, pathId, type Viewer } from "./guard.tsx";
import { htmlResponse, isHtmx, seeOther } from "./http.ts";
import { DeliveriesPage } from "./pages/deliveries.tsx";
import { DeliveryPage, TestResult } from "./pages/delivery.tsx";
import { RecoverSection } from "./pages/recover.tsx";
import {
  EditEndpointPage,
  EndpointPage,
  EndpointsPage,
  NewEndpointPage,
  type EndpointFormValues,
  type ShownSecret,
} from "./pages/endpoints.tsx";

/** Rows per page of the deliveries list. */
const PAGE_SIZE = 25;

const numberLabel = (n: PhoneNumber) =>
  `${n.displayPhoneNumber ?? n.phoneNumberId}${n.verifiedName ? ` (${n.verifiedName})` : ""}`;

/** Which form field an error of the endpoint operations belongs to. */
const FIELD_OF_ERROR: Partial<Record<string, keyof EndpointFormValues>> = {
  invalid_url: "url",
  invalid_fields: "fields",
  invalid_request: "phone_number_id",
};

/**
 * Endpoint and delivery pages: thin handlers over the relay's own plain functions
 * (webhooks/endpoints.ts, webhooks/deliveries.ts) and its views, the same ones the API answers with.
 */
export function webhookPages(deps: Deps, relay: RelayHandle) {
  const endpointDeps = { ...deps, urlRules: relay.urlRules, queue: relay.dispatcher };
  const choices = (accountId: string) =>
    deps.store.directory.numbers(accountId).map((n) => ({ phone_number_id: n.phoneNumberId, label: numberLabel(n) }));
  const hours = async (accountId: string, id: string) =>
    (await deliveries.endpointStats(deps, accountId, id, 24)).map(statsView);

  const endpointPage = async (
    viewer: Viewer,
    id: string,
    extra: { secret?: ShownSecret; flash?: JSX.Element } = {},
    status = 200,
  ) => {
    const endpoint = endpointView(await endpoints.mustEndpoint(deps, viewer.accountId, id));
    return htmlResponse(
      page(
        viewer,
        "Endpoint",
        "endpoints",
        EndpointPage({
          endpoint,
          hours: await hours(viewer.accountId, id),
          numbers: choices(viewer.accountId),
          now: deps.clock.now(),
          recovery: await latestRecovery(viewer.accountId, id),
          ...extra,
        }),
      ),
      status,
    );
  };
  const latestRecovery = async (accountId: string, id: string) => {
    const r = await latestRecover(deps, accountId, id);
    return r && recoveryView(r);
  };

  /** The add/edit form as posted; "All numbers" arrives as an empty value, which means null. */
  const readEndpointForm = (body: unknown) => {
    const form = readForm(createEndpointBody, body, ["fields"]);
    const raw = form.ok ? form.value : form.raw;
    const values: EndpointFormValues = {
      url: typeof raw.url === "string" ? raw.url : "",
      fields: Array.isArray(raw.fields) ? raw.fields.filter((f): f is string => typeof f === "string") : [],
      phone_number_id: typeof raw.phone_number_id === "string" ? raw.phone_number_id : null,
    };
    return { form, values };
  };

  const formErrors = (error: AppError): { errors: Record<string, string>; message?: string } => {
    const field = FIELD_OF_ERROR[error.errorName];
    return field ? { errors: { [field]: error.message } } : { errors: {}, message: error.message };
  };

  const deliveryPage = async (viewer: Viewer, id: string, flash?: JSX.Element, status = 200) => {
    const { delivery, attempts, payload } = await deliveries.getDelivery(deps, viewer.accountId, id);
    const endpoint = await deps.store.endpoints.get(delivery.endpointId);
    return htmlResponse(
      page(
        viewer,
        "Delivery",
        "deliveries",
        DeliveryPage({
          delivery: deliveryView(delivery),
          attempts: attempts.map(attemptView),
          payload,
          endpoint: endpoint ? endpointView(endpoint) : null,
          now: deps.clock.now(),
          flash,
        }),
      ),
      status,
    );
  };

  const testResult = async (viewer: Viewer, id: string) => {
    const { delivery, attempts } = await deliveries.getDelivery(deps, viewer.accountId, id);
    return htmlResponse(
      TestResult({
        delivery: deliveryView(delivery),
        attempts: attempts.map(attemptView),
        now: deps.clock.now(),
      }) as string,
    );
  };

  return new Elysia()
    .get(
      "/endpoints",
      guarded(deps, async ({ query }, viewer) => {
        const list = await deps.store.endpoints.ofAccount(viewer.accountId);
        const rows = await Promise.all(
          list.map(async (e) => ({ endpoint: endpointView(e), hours: await hours(viewer.accountId, e.id) })),
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
          EndpointsPage({ endpoints: rows, numbers: choices(viewer.accountId), now: deps.clock.now(), flash }),
        );
      }),
      { detail: { hide: true } },
    )
    .get(
      "/endpoints/new",
      guarded(deps, (_ctx, viewer) =>
        page(
          viewer,
          "Add endpoint",
          "endpoints",
          NewEndpointPage({
            action: "/dashboard/endpoints",
            submit: "Add endpoint",
            values: { url: "", fields: ["messages"], phone_number_id: null },
            numbers: choices(viewer.accountId),
            fieldNames: EVENT_FIELDS,
            noNumbers: false,
          }),
        ),
      ),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints",
      guarded(deps, async ({ body }, viewer) => {
        const { form, values } = readEndpointForm(body);
        const again = (
          errors: Record<string, string>,
          message: string | undefined,
          status: number,
          noNumbers = false,
        ) =>
          htmlResponse(
            page(
              viewer,
              "Add endpoint",
              "endpoints",
              NewEndpointPage({
                action: "/dashboard/endpoints",
                submit: "Add endpoint",
                values,
                numbers: choices(viewer.accountId),
                fieldNames: EVENT_FIELDS,
                errors,
                message,
                noNumbers,
              }),
            ),
            status,
          );
        if (!form.ok)
          return again(
            form.errors.fields ? { ...form.errors, fields: "Choose at least one event." } : form.errors,
            undefined,
            400,
          );
        try {
          const endpoint = await endpoints.createEndpoint(
            endpointDeps,
            viewer.accountId,
            { ...form.value, phone_number_id: values.phone_number_id },
            viewer.by,
          );
          // Answered directly (no redirect): the secret exists only in this response.
          return endpointPage(viewer, endpoint.id, { secret: { secret: endpoint.secret, rotated: false } }, 201);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const { errors, message } = formErrors(error);
          return again(errors, message, error.status, error.errorName === "no_numbers");
        }
      }),
      { detail: { hide: true } },
    )
    .get(
      "/endpoints/:id",
      guarded(deps, ({ params, query }, viewer) => {
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
        return endpointPage(viewer, pathId(params), { flash });
      }),
      { detail: { hide: true } },
    )
    .get(
      "/endpoints/:id/edit",
      guarded(deps, async ({ params }, viewer) => {
        const e = endpointView(await endpoints.mustEndpoint(deps, viewer.accountId, pathId(params)));
        return page(
          viewer,
          "Edit endpoint",
          "endpoints",
          EditEndpointPage({
            action: `/dashboard/endpoints/${encodeURIComponent(e.id)}/edit`,
            submit: "Save changes",
            values: { url: e.url, fields: e.fields, phone_number_id: e.phone_number_id },
            numbers: choices(viewer.accountId),
            fieldNames: EVENT_FIELDS,
          }),
        );
      }),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/edit",
      guarded(deps, async ({ params, body }, viewer) => {
        const id = pathId(params);
        await endpoints.mustEndpoint(deps, viewer.accountId, id);
        const { form, values } = readEndpointForm(body);
        const again = (errors: Record<string, string>, message: string | undefined, status: number) =>
          htmlResponse(
            page(
              viewer,
              "Edit endpoint",
              "endpoints",
              EditEndpointPage({
                action: `/dashboard/endpoints/${encodeURIComponent(id)}/edit`,
                submit: "Save changes",
                values,
                numbers: choices(viewer.accountId),
                fieldNames: EVENT_FIELDS,
                errors,
                message,
              }),
            ),
            status,
          );
        if (!form.ok)
          return again(
            form.errors.fields ? { ...form.errors, fields: "Choose at least one event." } : form.errors,
            undefined,
            400,
          );
        try {
          await endpoints.updateEndpoint(
            endpointDeps,
            viewer.accountId,
            id,
            { url: form.value.url, fields: form.value.fields, phone_number_id: values.phone_number_id },
            viewer.by,
          );
          return seeOther(`/dashboard/endpoints/${encodeURIComponent(id)}?done=saved`);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const { errors, message } = formErrors(error);
          return again(errors, message, error.status);
        }
      }),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/delete",
      guarded(deps, async ({ params }, viewer) => {
        await endpoints.deleteEndpoint(endpointDeps, viewer.accountId, pathId(params), viewer.by);
        return seeOther("/dashboard/endpoints?done=deleted");
      }),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/enable",
      guarded(deps, async ({ params }, viewer) => {
        const e = await endpoints.enableEndpoint(endpointDeps, viewer.accountId, pathId(params), viewer.by);
        return seeOther(`/dashboard/endpoints/${encodeURIComponent(e.id)}?done=enabled`);
      }),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/rotate-secret",
      guarded(deps, async ({ params }, viewer) => {
        const { secret, endpoint } = await endpoints.rotateSecret(
          endpointDeps,
          viewer.accountId,
          pathId(params),
          viewer.by,
        );
        return endpointPage(viewer, endpoint.id, { secret: { secret, rotated: true } });
      }),
      { detail: { hide: true } },
    )
    .get(
      "/endpoints/:id/recover",
      guarded(deps, async ({ params }, viewer) =>
        htmlResponse(
          RecoverSection({
            endpointId: pathId(params),
            recovery: await latestRecovery(viewer.accountId, pathId(params)),
            now: deps.clock.now(),
          }) as string,
        ),
      ),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/recover",
      guarded(deps, async ({ params, body }, viewer) => {
        const { since } = formFields(body);
        const from = utcField(typeof since === "string" ? since : undefined) ?? "";
        try {
          await startRecover(endpointDeps, viewer.accountId, pathId(params), from, viewer.by);
        } catch (error) {
          if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
          return endpointPage(
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
      }),
      { detail: { hide: true } },
    )
    .post(
      "/endpoints/:id/test",
      guarded(deps, async ({ params, request }, viewer) => {
        const deliveryId = await endpoints.sendTest(endpointDeps, viewer.accountId, pathId(params));
        return isHtmx(request)
          ? testResult(viewer, deliveryId)
          : seeOther(`/dashboard/deliveries/${encodeURIComponent(deliveryId)}`);
      }),
      { detail: { hide: true } },
    )

    .get(
      "/deliveries",
      guarded(deps, async ({ query }, viewer) => {
        const wanted = query.status;
        const status: DeliveryStatus | undefined =
          wanted === "pending" || wanted === "succeeded" || wanted === "parked" ? wanted : undefined;
        const filter = {
          endpoint_id: query.endpoint_id || undefined,
          status,
          cursor: query.cursor || undefined,
          field: query.field || undefined,
          number: query.number || undefined,
          message_id: query.message_id || undefined,
          from: query.from || undefined,
          to: query.to || undefined,
          last_status: query.last_status && /^[1-5]\d\d$/.test(query.last_status) ? query.last_status : undefined,
        };
        let result: Awaited<ReturnType<typeof deliveries.listDeliveries>>;
        try {
          result = await deliveries.listDeliveries(deps, viewer.accountId, {
            ...filter,
            from: utcField(filter.from),
            to: utcField(filter.to),
            last_status: filter.last_status === undefined ? undefined : Number(filter.last_status),
            limit: PAGE_SIZE,
          });
        } catch (error) {
          // A time the browser's field sends is always valid; a hand-made one that is not shows nothing.
          if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
          result = { data: [], nextCursor: null, about: new Map() };
        }
        return page(
          viewer,
          "Deliveries",
          "deliveries",
          DeliveriesPage({
            deliveries: result.data.map((d) => ({
              ...deliveryView(d),
              about: result.about.get(d.eventId) ?? d.fields.join(" · "),
            })),
            numbers: deps.store.directory.numbers(viewer.accountId).map((n) => n.phoneNumberId),
            endpoints: (await deps.store.endpoints.ofAccount(viewer.accountId)).map(endpointView),
            filter,
            nextCursor: result.nextCursor,
            firstPage: !filter.cursor,
            now: deps.clock.now(),
          }),
        );
      }),
      { detail: { hide: true } },
    )
    .get(
      "/deliveries/:id",
      guarded(deps, ({ params, query }, viewer) => {
        const flash =
          query.done === "replayed" && query.from ? (
            <Notice tone="ok">
              <p>
                Replayed as this new delivery (replay of{" "}
                <span class="mono" safe>
                  {query.from}
                </span>
                ).
              </p>
            </Notice>
          ) : undefined;
        return deliveryPage(viewer, pathId(params), flash);
      }),
      { detail: { hide: true } },
    )
    .get(
      "/deliveries/:id/result",
      guarded(deps, ({ params }, viewer) => testResult(viewer, pathId(params))),
      { detail: { hide: true } },
    )
    .post(
      "/deliveries/:id/replay",
      guarded(deps, async ({ params }, viewer) => {
        const id = pathId(params);
        try {
          const replay = await deliveries.replayDelivery(endpointDeps, viewer.accountId, id, viewer.by);
          return seeOther(
            `/dashboard/deliveries/${encodeURIComponent(replay.id)}?done=replayed&from=${encodeURIComponent(id)}`,
          );
        } catch (error) {
          if (!(error instanceof AppError) || error.errorName === "not_found") throw error;
          const words =
            error.errorName === "payload_expired"
              ? "This delivery cannot be replayed: its payload has been deleted (410 payload_expired). History payloads are deleted as soon as they are delivered or parked."
              : error.message;
          return deliveryPage(
            viewer,
            id,
            <Notice tone="bad">
              <p safe>{words}</p>
            </Notice>,
            error.status,
          );
        }
      }),
      { detail: { hide: true } },
    );
}

/**
 * Typed client of the triad brands API, over the types openapi-typescript generates from
 * api/brands.yaml into ./schema.d.ts (`make sdk`).
 *
 * The user routes take form bodies, as the original API did: pass `...FORM` in a request's options
 * and the typed body goes as application/x-www-form-urlencoded. Routes that need a user take the
 * token as the `access_token` query parameter (typed), or as a bearer header.
 *
 * @example
 * const api = createBrandsClient({ baseUrl: "http://localhost:8080" });
 * const { data } = await api.POST("/api/user/login", { body: { email, password }, ...FORM });
 * await api.POST("/api/subscribe/{id}", { params: { path: { id }, query: { access_token: data.token } } });
 *
 * @module
 */
import { createClient, type Client, type ClientOptions } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (Brand, User, ApiError, ...). */
export type schemas = components["schemas"];

/** BrandsClient is a typed client of the brands API. */
export type BrandsClient = Client<paths>;

/** FORM is the request option that sends a body as a form, as the user routes expect. */
export const FORM = Object.freeze({ headers: { "Content-Type": "application/x-www-form-urlencoded" } });

/** createBrandsClient returns a client of the brands API at options.baseUrl. */
export function createBrandsClient(options: ClientOptions): BrandsClient {
  return createClient<paths>(options);
}

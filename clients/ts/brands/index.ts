/**
 * Typed client of the triad brands API, over the types openapi-typescript generates from
 * api/brands.yaml into ./schema.d.ts (`make sdk`).
 *
 * The user routes take JSON or form bodies (the original API's clients send forms): bodies go as
 * JSON unless a call passes `...FORM`. The token goes as every surface's does: the client's
 * `token` option, sent as `Authorization: Bearer` (the spec's `access_token` query parameter,
 * for the original API's clients, is typed too).
 *
 * @example
 * let token: string | undefined;
 * const api = createBrandsClient({ baseUrl: "http://localhost:8080", token: () => token });
 * const { data } = await api.POST("/api/user/login", { body: { email, password } });
 * token = data?.token;
 * await api.POST("/api/subscribe/{id}", { params: { path: { id } } });
 *
 * @module
 */
import { createClient, type Client, type ClientOptions, type Surface } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export { CookieJar } from "../core/client.js";
export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (Brand, User, ApiError, ...). */
export type schemas = components["schemas"];

/** BrandsClient is a typed client of the brands API. */
export type BrandsClient = Client<paths>;

/** FORM is the request option that sends a body as a form, as the user routes expect. */
export const FORM = Object.freeze({ headers: { "Content-Type": "application/x-www-form-urlencoded" } });

/** surface is what the brands client knows of api/brands.yaml beyond its types. */
const surface: Surface<paths> = {
  credential: (token) => ["Authorization", `Bearer ${token}`],
  // Every body takes JSON; the compiler holds this (empty) list to the spec.
  forms: {},
};

/**
 * createBrandsClient returns a client of the brands API at options.baseUrl. With options.token
 * every request carries it as `Authorization: Bearer <token>`.
 */
export function createBrandsClient(options: ClientOptions): BrandsClient {
  return createClient<paths>(options, surface);
}

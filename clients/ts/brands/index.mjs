// @ts-check
/**
 * Typed client of the triad brands API: openapi-fetch over the types that openapi-typescript
 * generates from api/brands.yaml into ./schema.d.ts (`make sdk`).
 *
 * The user routes take form bodies, as the original API did: pass `...FORM` in a request's options
 * and openapi-fetch sends the typed body as application/x-www-form-urlencoded. Routes that need a
 * user take the token as the `access_token` query parameter (typed), or as a bearer header.
 *
 * @example
 * const api = createBrandsClient({ baseUrl: "http://localhost:8080" });
 * const { data } = await api.POST("/api/user/login", { body: { email, password }, ...FORM });
 * await api.POST("/api/subscribe/{id}", { params: { path: { id }, query: { access_token: data.token } } });
 *
 * @module
 */
import createClient from "openapi-fetch";

/**
 * @typedef {import("./schema.js").paths} paths
 * @typedef {import("./schema.js").components["schemas"]} schemas
 * @typedef {import("openapi-fetch").Client<paths>} BrandsClient
 */

/** FORM is the request option that sends a body as a form, as the user routes expect. */
export const FORM = Object.freeze({ headers: { "Content-Type": "application/x-www-form-urlencoded" } });

/**
 * createBrandsClient returns a client of the brands API at options.baseUrl.
 *
 * @param {import("openapi-fetch").ClientOptions} options
 * @returns {BrandsClient}
 */
export function createBrandsClient(options) {
  return createClient(options);
}

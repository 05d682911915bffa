// @ts-check
/**
 * Typed client of the triad orders API: openapi-fetch over the types that openapi-typescript
 * generates from api/orders.yaml into ./schema.d.ts (`make sdk`). Every path, parameter, body and
 * response is checked by the TypeScript compiler against the spec.
 *
 * @example
 * const anon = createOrdersClient({ baseUrl: "http://localhost:8080" });
 * const token = await passwordGrant(anon, { clientId, clientSecret, username, password });
 * const api = createOrdersClient({ baseUrl: "http://localhost:8080", token });
 * const { data: me } = await api.GET("/authenticated");
 *
 * @module
 */
import createClient from "openapi-fetch";

/**
 * @typedef {import("./schema.js").paths} paths
 * @typedef {import("./schema.js").components["schemas"]} schemas
 * @typedef {import("openapi-fetch").Client<paths>} OrdersClient
 * @typedef {import("openapi-fetch").ClientOptions & { token?: string }} OrdersClientOptions
 */

/**
 * createOrdersClient returns a client of the orders API at options.baseUrl. With options.token
 * every request carries it as `Authorization: Bearer <token>`.
 *
 * @param {OrdersClientOptions} options
 * @returns {OrdersClient}
 */
export function createOrdersClient({ token, ...options }) {
  const client = createClient(options);
  if (token) {
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${token}`);
      },
    });
  }
  return client;
}

/**
 * passwordGrant obtains an access token with the OAuth 2.0 password grant at POST /oauth/token,
 * sending the user's and the client's credentials as form fields (RFC 6749 §4.3.2).
 * It throws with the RFC 6749 error code when the server refuses.
 *
 * @param {OrdersClient} client
 * @param {{ clientId: string, clientSecret: string, username: string, password: string }} creds
 * @returns {Promise<string>} the access token
 */
export async function passwordGrant(client, { clientId, clientSecret, username, password }) {
  const { data, error, response } = await client.POST("/oauth/token", {
    body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username, password },
    // openapi-fetch serializes the body as a form when the Content-Type says so.
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  });
  if (!data) {
    // The token endpoint refuses in the RFC 6749 shape; only an oversized body gets the ApiError shape.
    const reason = error && "error" in error ? `${error.error}: ${error.error_description ?? ""}` : error?.code;
    throw new Error(`token request refused: ${response.status} ${reason}`);
  }
  return data.access_token;
}

// A scratch application of the installed @triad/sdk tarball: it imports every surface by its
// package export, must type-check strictly, and then calls a server at TRIAD_<SURFACE>_URL, printing
// what it saw as one JSON line for the Go test (e2e.TestSDKPackage) to check.
import { createAuthClient, xsrfToken, type schemas as authSchemas } from "@triad/sdk/auth";
import { createBrandsClient, type schemas as brandsSchemas } from "@triad/sdk/brands";
import { createOrdersClient, passwordGrant, type schemas as ordersSchemas } from "@triad/sdk/orders";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

/** base is where surface is: the server, or in contract mode the surface's Prism proxy. */
function base(surface: "ORDERS" | "BRANDS" | "AUTH"): string {
  return process.env[`TRIAD_${surface}_URL`] ?? "";
}
const clientId = process.env.TRIAD_ORDERS_CLIENT_ID ?? "";
const clientSecret = process.env.TRIAD_ORDERS_CLIENT_SECRET ?? "";

async function main(): Promise<Record<string, unknown>> {
  // orders: register, log in with the password grant, place an order.
  const anon = createOrdersClient({ baseUrl: base("ORDERS") });
  const userType: ordersSchemas["UserType"] = "Customer";
  const reg = await anon.POST("/users", { body: { username: "pack-customer", password: "pack-customer-password", userType } });
  if (!reg.data) throw new Error(`register: ${reg.response.status}`);
  const grant = await passwordGrant(anon, { clientId, clientSecret, username: "pack-customer", password: "pack-customer-password" });
  if (!grant.data) throw new Error(`token: ${grant.response.status} ${JSON.stringify(grant.error)}`);
  const orders = createOrdersClient({ baseUrl: base("ORDERS"), token: grant.data.access_token });
  const created = await orders.POST("/orders", { body: { description: "Packed and installed", price: 12.5 } });
  if (!created.data) throw new Error(`create order: ${created.response.status} ${created.error?.code}`);
  const order: ordersSchemas["Order"] = created.data;

  // The types bite: a body without the required price must not compile.
  // @ts-expect-error price is required by api/orders.yaml
  void (() => orders.POST("/orders", { body: { description: "no price" } }));

  // brands: log in as the prepared demo user; the client carries the token from then on.
  let brandsToken: string | undefined;
  const brands = createBrandsClient({ baseUrl: base("BRANDS"), token: () => brandsToken });
  const login = await brands.POST("/api/user/login", { body: { email: "demo@brands.test", password: "demo-password" } });
  if (!login.data) throw new Error(`brands login: ${login.response.status}`);
  brandsToken = login.data.token;
  const me = await brands.GET("/api/user/me");
  const brandsUser: brandsSchemas["User"] | undefined = me.data;

  // auth: the provider list and a refused login with its documented error body.
  const auth = createAuthClient({ baseUrl: base("AUTH") });
  const providers = await auth.GET("/auth/list");
  const refused = await auth.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "wrong-password" },
  });
  const refusal: authSchemas["ApiError"] | undefined = refused.error && "code" in refused.error ? refused.error : undefined;

  return {
    order: { status: order.status, price: String(order.price), customerId: order.customerId, userId: reg.data.id },
    brandsUser: brandsUser?.email,
    providers: providers.data,
    refused: { status: refused.response.status, code: refusal?.code },
    xsrf: xsrfToken("a=1; XSRF-TOKEN=abc%3D"),
  };
}

main().then(
  (out) => console.log(JSON.stringify(out)),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);

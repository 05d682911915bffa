// @ts-check
// The brands API through the TypeScript SDK: register (a form body, as the original API's clients
// send) and log in, subscribe to a brand with the client's token option and see it in the profile
// and in the brand's subscriber count.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FORM, createBrandsClient } from "../brands/index.js";
import { baseUrl, checkedFetch, expected, refusal } from "./env.mjs";

/** @type {string | undefined} */
let token;
const api = createBrandsClient({ baseUrl: baseUrl("brands"), fetch: checkedFetch, token: () => token });

test("a user logs in and subscribes to a brand", async () => {
  const reg = await api.POST("/api/user/register", {
    body: { name: "Ts User", email: "ts-user@e2e.test", password: "ts-user-password" },
    ...FORM,
  });
  assert.equal(reg.response.status, 201);
  assert.deepEqual(reg.data?.subscriptions, []);

  const login = await api.POST("/api/user/login", { body: { email: "ts-user@e2e.test", password: "ts-user-password" } });
  assert.ok(login.data, `login: ${login.response.status}`);
  token = login.data.token;

  const list = await api.GET("/api/brand/list");
  const brand = list.data?.find((b) => b.availability);
  assert.ok(brand, "some brand is available");
  const id = brand._id;

  const sub = await api.POST("/api/subscribe/{id}", { params: { path: { id } } });
  assert.equal(sub.data?.message, "Successfully Subscribed");

  // The original API's clients send the token as a query parameter; it is typed too.
  const me = await api.GET("/api/user/me", { params: { query: { access_token: token } } });
  assert.deepEqual(
    me.data?.subscriptions.map((b) => b._id),
    [id],
  );
  const after = await api.GET("/api/brand/{id}", { params: { path: { id } } });
  // The mock's brand is the spec's example, with its 12 subscribers, before as after.
  assert.equal(after.data?.subscriberCount, expected(brand.subscriberCount + 1, 12));

  const un = await api.POST("/api/unsubscribe/{id}", { params: { path: { id } } });
  assert.equal(un.data?.message, "Successfully Unsubscribed");
});

test("a wrong password is refused with the documented error", async () => {
  const login = await createBrandsClient({ baseUrl: baseUrl("brands"), fetch: checkedFetch, ...refusal(401) }).POST("/api/user/login", {
    body: { email: "nobody@e2e.test", password: "not-a-password" },
  });
  assert.equal(login.response.status, 401);
  assert.equal(login.error?.code, "invalid_credentials");
});

import { expect, test } from "@playwright/test";
import { guardedURL as guarded, shot } from "./workspace-helpers";

// `guarded`: the pass's sign-in server (playwright.config.ts), started with API_TOKEN set.
const token = "e2e-token-for-the-guarded-server";

test.describe("sign-in when API_TOKEN is set", () => {
  test("pages redirect to sign-in, the token signs in once, the session works, sign-out ends it", async ({ page, context, request }) => {
    // Without a session: every page goes to sign-in, and nothing hands out a cookie.
    await page.goto(`${guarded}/datasets/1`);
    await expect(page).toHaveURL(/\/signin\?next=%2Fdatasets%2F1/);
    await expect(page.getByRole("heading", { name: "Sign in to Turnscope" })).toBeVisible();
    expect(await context.cookies(guarded)).toEqual([]);
    const api = await request.get(`${guarded}/api/datasets`);
    expect(api.status()).toBe(401);

    // A wrong token is refused with a message; the right one signs in and returns to the page asked for.
    await page.getByLabel("API key").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.locator("#signin-error")).toHaveText("That is not an API key of this server.");
    expect(await context.cookies(guarded)).toEqual([]);
    await page.goto(`${guarded}/import`);
    await expect(page).toHaveURL(/\/signin\?next=%2Fimport/);
    await page.getByLabel("API key").fill(token);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(`${guarded}/import`);
    const [session] = await context.cookies(guarded);
    expect(session.name).toBe("turnscope_session");
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe("Strict");
    expect(session.value).not.toContain(token);
    expect(session.expires).toBeGreaterThan(Date.now() / 1000 + 3600);

    // The pages' own API calls work with the session: create a dataset from the datasets page.
    await page.goto(`${guarded}/`);
    const name = `Guarded ${Date.now()}`;
    const form = page.getByRole("form", { name: "Create dataset" });
    await page.getByLabel("Name").fill(name);
    await form.getByRole("button", { name: "Create dataset" }).click();
    await expect(form.getByRole("status")).toContainText(`Created “${name}”`);
    await expect(page.getByTestId("dataset-row").filter({ hasText: name })).toBeVisible();
    await shot(page, { path: "test-results/screenshots/signed-in.png" });

    // Sign out: back to sign-in, and the pages are closed again — also to a copy of the cookie kept from before.
    await expect(page.getByTestId("signed-in-as")).toHaveText("admin · admin");
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/signin/);
    await page.goto(`${guarded}/`);
    await expect(page).toHaveURL(/\/signin/);
    await shot(page, { path: "test-results/screenshots/sign-in.png" });
    const kept = await request.get(`${guarded}/api/datasets`, { headers: { cookie: `${session.name}=${session.value}` } });
    expect(kept.status()).toBe(401);
    const keptPage = await request.get(`${guarded}/`, { headers: { cookie: `${session.name}=${session.value}` }, maxRedirects: 0 });
    expect(keptPage.status()).toBe(307);
  });

  // @store-independent: where the sign-in form sends the browser; the `next` checks are the route's
  // (lib/api/route.test.ts, on both stores), and signing in and out on PostgreSQL is the test above.
  test("next after sign-in never leaves the site, even with a tab or backslash in it", { tag: "@store-independent" }, async ({ page }) => {
    for (const next of ["/%09/evil.example/", "/%5Cevil.example/", "/.//evil.example/", "//evil.example/"]) {
      await page.goto(`${guarded}/signin?next=${next}`);
      await page.getByLabel("API key").fill(token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForLoadState();
      expect(new URL(page.url()).origin, next).toBe(guarded);
      await page.getByRole("button", { name: "Sign out" }).click();
      await expect(page).toHaveURL(/\/signin/);
    }
  });

  test("an admin adds a person and a key on the People page; that person signs in with it and acts with their role", async ({ page, browser }) => {
    await page.goto(`${guarded}/signin?next=/people`);
    await page.getByLabel("API key").fill(token);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(`${guarded}/people`);
    const name = `ana${Date.now() % 100000}`;
    await page.getByRole("textbox", { name: "Name" }).fill(name);
    await page.getByRole("combobox", { name: "Role", exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Add person" }).click();
    const person = page.getByTestId(`person-${name}`);
    await expect(person).toBeVisible();
    await person.getByRole("button", { name: "New key" }).click();
    const key = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(key).toMatch(/^tsk_/);
    await expect(person.getByText(`${key.slice(0, 12)}…`)).toBeVisible();
    await shot(page, { path: "test-results/screenshots/people.png", fullPage: true });

    // The new person, in another browser: signs in with the key and is a viewer.
    const other = await browser.newContext();
    const theirs = await other.newPage();
    await theirs.goto(`${guarded}/signin`);
    await theirs.getByLabel("API key").fill(key);
    await theirs.keyboard.press("Enter");
    await expect(theirs.getByTestId("signed-in-as")).toHaveText(`${name} · viewer`);
    const write = await theirs.evaluate(async () => (await fetch("/api/datasets", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x" }) })).status);
    expect(write).toBe(403);
    await theirs.goto(`${guarded}/people`);
    await expect(theirs.getByRole("alert").filter({ hasText: "Only admins" })).toContainText("Only admins manage people");

    // The admin makes them an annotator: their open session may write at once. Then revokes the key: signed out.
    await person.getByRole("combobox", { name: `Role of ${name}` }).selectOption("annotator");
    await expect.poll(async () => theirs.evaluate(async () => (await fetch("/api/datasets", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "y" }) })).status)).toBe(201);
    await person.getByRole("button", { name: `Revoke ${key.slice(0, 12)}` }).click();
    await expect(person.getByText("revoked")).toBeVisible();
    await theirs.goto(`${guarded}/`);
    await expect(theirs).toHaveURL(/\/signin/);
    await other.close();
  });
});

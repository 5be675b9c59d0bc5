import { expect, test } from "@playwright/test";

// The second app server of playwright.config.ts, started with API_TOKEN set.
const guarded = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 3210) + 2}`;
const token = "e2e-token-for-the-guarded-server";

// @store-independent: the sign-in gate and session cookie never reach the store (docs/testing.md).
test.describe("sign-in when API_TOKEN is set", { tag: "@store-independent" }, () => {
  test("pages redirect to sign-in, the token signs in once, the session works, sign-out ends it", async ({ page, context, request }) => {
    // Without a session: every page goes to sign-in, and nothing hands out a cookie.
    await page.goto(`${guarded}/datasets/1`);
    await expect(page).toHaveURL(/\/signin\?next=%2Fdatasets%2F1/);
    await expect(page.getByRole("heading", { name: "Sign in to Turnscope" })).toBeVisible();
    expect(await context.cookies(guarded)).toEqual([]);
    const api = await request.get(`${guarded}/api/datasets`);
    expect(api.status()).toBe(401);

    // A wrong token is refused with a message; the right one signs in and returns to the page asked for.
    await page.getByLabel("API token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.locator("#signin-error")).toHaveText("That is not the API token.");
    expect(await context.cookies(guarded)).toEqual([]);
    await page.goto(`${guarded}/import`);
    await expect(page).toHaveURL(/\/signin\?next=%2Fimport/);
    await page.getByLabel("API token").fill(token);
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
    await page.screenshot({ path: "test-results/screenshots/signed-in.png" });

    // Sign out: back to sign-in, and the pages are closed again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/signin/);
    await page.goto(`${guarded}/`);
    await expect(page).toHaveURL(/\/signin/);
    await page.screenshot({ path: "test-results/screenshots/sign-in.png" });
  });
});

import path from "node:path";
import { expect, test } from "@playwright/test";
import { guardedURL as guarded } from "./workspace-helpers";

// @store-independent: what a page does before its scripts have run; no store is involved.
test.describe("before the page's scripts have run", { tag: "@store-independent" }, () => {
  test("what is typed and chosen before hydration is kept, not reset by it", async ({ page }) => {
    // A slow link: the server-rendered page shows at once, its scripts arrive 1.5 s later.
    await page.route("**/_next/static/chunks/**/*.js", async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    await page.goto("/import", { waitUntil: "commit" });
    const name = page.getByLabel("Dataset name");
    await expect(name).toBeVisible();
    // Inert until hydrated: typed text would be reset to the component's state, a file dropped.
    await expect(name).toBeDisabled();
    await expect(page.getByRole("button", { name: "Import" })).toBeDisabled();

    // Typing and choosing wait for the page to be ready instead of being lost.
    await name.fill("Typed before the scripts ran");
    await page.getByLabel("choose a file").setInputFiles(path.join(__dirname, "fixtures", "sample-dataset.json"));
    await expect(page.getByTestId("chosen-file")).toContainText("sample-dataset.json");
    await expect(name).toHaveValue("Typed before the scripts ran");
    await expect(page.getByRole("button", { name: "Import" })).toBeEnabled();
  });
});

// The sign-in form is a plain post: it works with no script at all, so it is never held for hydration.
test.describe("sign-in without scripts", { tag: "@store-independent" }, () => {
  test.use({ javaScriptEnabled: false });
  test("the sign-in form takes a key and signs in with scripts turned off", async ({ page }) => {
    await page.goto(`${guarded}/signin?next=/templates`);
    const key = page.getByLabel("API key");
    await expect(key).toBeEnabled();
    await key.fill("e2e-token-for-the-guarded-server");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(`${guarded}/templates`);
  });
});

import { expect, test } from "@playwright/test";
import { openApiReference, shot } from "./workspace-helpers";

// @store-independent: a form, a list and the API reference; creating and listing datasets are route tests on both stores.
test.describe("datasets page", { tag: "@store-independent" }, () => {
  test("creates a dataset through the form and lists it", async ({ page }) => {
    const name = `E2E dataset ${Date.now()}`;
    await page.goto("/");
    await expect(page.getByRole("heading", { name: "Datasets", level: 1 })).toBeVisible();

    // An empty name is refused in place, and nothing is created.
    const form = page.getByRole("form", { name: "Create dataset" });
    await form.getByRole("button", { name: "Create dataset" }).click();
    await expect(form.getByRole("alert")).toContainText("Give the dataset a name");
    await expect(page.getByLabel("Name")).toHaveAttribute("aria-invalid", "true");

    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Description").fill("Created by the browser test");
    await form.getByRole("button", { name: "Create dataset" }).click();
    await expect(form.getByRole("status")).toContainText(`Created “${name}”`);

    const row = page.getByTestId("dataset-row").filter({ hasText: name });
    await expect(row).toBeVisible();
    await expect(row).toContainText("Created by the browser test");
    await shot(page, { path: "test-results/screenshots/datasets.png", fullPage: true });

    // It is really stored: the API and a fresh page load both show it.
    const res = await page.request.get("/api/datasets?limit=500");
    expect(res.status()).toBe(200);
    const list = (await res.json()) as Array<{ name: string; conversation_count: number }>;
    expect(list.find((d) => d.name === name)).toMatchObject({ conversation_count: 0 });
    await page.reload();
    await expect(page.getByTestId("dataset-row").filter({ hasText: name })).toBeVisible();

    await row.getByRole("link", { name }).click();
    await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  });

  test("/datasets, the path the dataset pages suggest, leads to the datasets list", async ({ page }) => {
    await page.goto("/datasets");
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole("heading", { name: "Datasets", level: 1 })).toBeVisible();
  });

  test("the API reference renders the OpenAPI document", async ({ page }) => {
    await openApiReference(page, "/datasets/{id}/conversations");
    await shot(page, { path: "test-results/screenshots/docs.png" });
  });
});

"use client";

import dynamic from "next/dynamic";
import "swagger-ui-react/swagger-ui.css";

// Swagger UI touches `window` while loading, so it renders only in the browser.
const SwaggerUI = dynamic(() => import("swagger-ui-react"), {
  ssr: false,
  loading: () => <p className="p-6 text-sm text-slate-500">Loading the API reference…</p>,
});

/** The OpenAPI document rendered for people by Swagger UI. */
export function ApiReference({ spec }: { spec: Record<string, unknown> }) {
  return <SwaggerUI spec={spec} docExpansion="list" defaultModelsExpandDepth={0} tryItOutEnabled={false} />;
}

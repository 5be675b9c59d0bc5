"use client";

import { useEffect, useRef } from "react";
import "swagger-ui-dist/swagger-ui.css";

/**
 * The OpenAPI document rendered for people by Swagger UI, from its prebuilt bundle (swagger-ui-dist):
 * bundled again by Next.js, swagger-ui-react's OpenAPI 3.1 resolver threw "refract is not a function"
 * on every operation expanded. It touches `window` while loading, so it loads in the browser only.
 */
export function ApiReference({ spec }: { spec: Record<string, unknown> }) {
  const node = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cancelled = false;
    void import("swagger-ui-dist/swagger-ui-bundle.js").then(({ default: SwaggerUI }) => {
      if (cancelled || !node.current) return;
      SwaggerUI({ domNode: node.current, spec, docExpansion: "list", defaultModelsExpandDepth: 0, tryItOutEnabled: false, deepLinking: false });
    });
    return () => {
      cancelled = true;
    };
  }, [spec]);
  return (
    <div ref={node}>
      <p className="p-6 text-sm text-slate-500">Loading the API reference…</p>
    </div>
  );
}

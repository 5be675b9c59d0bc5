// swagger-ui-dist ships no types: its prebuilt bundle's one export, called with Swagger UI's options.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;
  export default SwaggerUIBundle;
}

import pkg from "@/package.json";

/** The running Turnscope version, from package.json. */
export const version: string = pkg.version;

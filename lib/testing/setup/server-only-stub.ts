// Stand-in for the `server-only` package under vitest, where no client bundle exists to protect.
export {};

"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";

type Role = "admin" | "annotator" | "viewer";
type ApiKey = { id: number; user_id: number; name: string; prefix: string; created_at: string; last_used_at: string | null; revoked_at: string | null };
type User = { id: number; name: string; role: Role; created_at: string; keys: ApiKey[] };
/** A name with current labels that is no person here (lib/labels/authors.ts). */
type LabelAuthor = { user_id: string; labels: number; datasets: number; who: "person" | "before_keys" | "no_person" };

const roleHelp: Record<Role, string> = {
  viewer: "reads everything",
  annotator: "also labels, imports, creates metrics and runs",
  admin: "also manages people and keys",
};

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "never");

/** People of the team, their roles and API keys: create, change role, issue a key (shown once), revoke. */
export function PeopleManager({ me, open, labelAuthors = [] }: { me: string; open: boolean; labelAuthors?: LabelAuthor[] }) {
  const client = useQueryClient();
  const router = useRouter();
  const users = useQuery({ queryKey: ["users"], queryFn: async () => (await apiFetch<User[]>("/users")).data });
  const [error, setError] = useState<string | null>(null);
  const [newKey, setNewKey] = useState<{ user: string; key: string } | null>(null);
  const [name, setName] = useState("");
  // In the one-person mode the first person added is the admin who will make the first key.
  const [role, setRole] = useState<Role>(open ? "admin" : "annotator");
  const refresh = () => client.invalidateQueries({ queryKey: ["users"] });
  const fail = (e: unknown) => setError(e instanceof ApiError ? e.message : String(e));

  const createUser = useMutation({
    mutationFn: async () => (await apiFetch<User>("/users", { method: "POST", json: { name, role } })).data,
    onSuccess: () => {
      setName("");
      setError(null);
      void refresh();
    },
    onError: fail,
  });
  const changeRole = useMutation({
    mutationFn: async (v: { id: number; role: Role }) => apiFetch(`/users/${v.id}`, { method: "PATCH", json: { role: v.role } }),
    onSuccess: () => {
      setError(null);
      void refresh();
    },
    onError: (e) => {
      fail(e);
      void refresh();
    },
  });
  const createKey = useMutation({
    mutationFn: async (user: User) => ({ user: user.name, key: (await apiFetch<ApiKey & { key: string }>(`/users/${user.id}/keys`, { method: "POST", json: { name: "key" } })).data.key }),
    onSuccess: (created) => {
      setNewKey(created);
      setError(null);
      void refresh();
      // The first key ended the one-person mode and signed this browser in with it: the page says so now.
      if (open) router.refresh();
    },
    onError: fail,
  });
  const revoke = useMutation({
    mutationFn: async (key: ApiKey) => apiFetch(`/keys/${key.id}`, { method: "DELETE" }),
    onSuccess: () => {
      setError(null);
      void refresh();
    },
    onError: fail,
  });

  return (
    <div className="space-y-6">
      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-4 py-2 text-sm text-red-700">
          {error}
        </p>
      ) : null}
      {newKey ? (
        <div role="status" className="rounded-md border border-emerald-200 bg-emerald-50 px-4 py-3 text-sm text-emerald-900">
          <p className="font-medium">New key for {newKey.user}: copy it now, it is not shown again.</p>
          <div className="mt-2 flex items-center gap-2">
            <code data-testid="new-key" className="break-all rounded bg-white px-2 py-1 font-mono text-xs ring-1 ring-emerald-200">
              {newKey.key}
            </code>
            <Button size="sm" variant="secondary" onClick={() => void navigator.clipboard?.writeText(newKey.key)}>
              Copy
            </Button>
            <Button size="sm" variant="ghost" onClick={() => setNewKey(null)}>
              Done
            </Button>
          </div>
        </div>
      ) : null}
      <Card>
        <CardHeader title="Add a person" description="The name is the user id written on their labels; it never changes." />
        <form
          className="flex flex-wrap items-end gap-3 px-5 py-4"
          onSubmit={(e) => {
            e.preventDefault();
            createUser.mutate();
          }}
        >
          <label className="text-sm font-medium text-slate-700">
            Name
            <Input value={name} onChange={(e) => setName(e.target.value)} required aria-label="Name" className="mt-1 w-56" placeholder="ana" />
          </label>
          <label className="text-sm font-medium text-slate-700">
            Role
            <Select value={role} onChange={(e) => setRole(e.target.value as Role)} aria-label="Role" className="mt-1 w-40">
              <option value="viewer">viewer</option>
              <option value="annotator">annotator</option>
              <option value="admin">admin</option>
            </Select>
          </label>
          <Button type="submit" disabled={createUser.isPending || !name.trim()}>
            Add person
          </Button>
          <p className="w-full text-xs text-slate-500">
            {role}: {roleHelp[role]}.
          </p>
        </form>
      </Card>
      <Card>
        <CardHeader title="People" description="Keys are stored hashed: only their first characters are shown." />
        {users.isLoading ? <p className="px-5 py-4 text-sm text-slate-500">Loading…</p> : null}
        {users.data?.length === 0 ? (
          <p className="border-t border-slate-100 px-5 py-4 text-sm text-slate-500" data-testid="no-people">
            Nobody yet.{open ? " While the server is open, labels are written as “default”." : ""}
          </p>
        ) : null}
        <ul className="divide-y divide-slate-100" aria-label="People">
          {(users.data ?? []).map((u) => (
            <li key={u.id} className="px-5 py-4" data-testid={`person-${u.name}`}>
              <div className="flex flex-wrap items-center gap-3">
                <span className="font-medium text-slate-900">{u.name}</span>
                {u.name === me ? <Badge tone="brand">you</Badge> : null}
                <div className="w-36">
                  <Select aria-label={`Role of ${u.name}`} value={u.role} className="h-8" onChange={(e) => changeRole.mutate({ id: u.id, role: e.target.value as Role })}>
                    <option value="viewer">viewer</option>
                    <option value="annotator">annotator</option>
                    <option value="admin">admin</option>
                  </Select>
                </div>
                <Button size="sm" variant="secondary" className="ml-auto" onClick={() => createKey.mutate(u)}>
                  New key
                </Button>
              </div>
              {u.keys.length ? (
                <table className="mt-3 w-full text-left text-xs text-slate-600">
                  <thead>
                    <tr className="text-slate-400">
                      <th className="py-1 font-medium">Key</th>
                      <th className="py-1 font-medium">Created</th>
                      <th className="py-1 font-medium">Last used</th>
                      <th className="py-1 font-medium" />
                    </tr>
                  </thead>
                  <tbody>
                    {u.keys.map((k) => (
                      <tr key={k.id}>
                        <td className="py-1 font-mono">{k.prefix}…</td>
                        <td className="py-1">{when(k.created_at)}</td>
                        <td className="py-1">{when(k.last_used_at)}</td>
                        <td className="py-1 text-right">
                          {k.revoked_at ? (
                            <Badge>revoked</Badge>
                          ) : (
                            <Button size="sm" variant="ghost" aria-label={`Revoke ${k.prefix}`} onClick={() => revoke.mutate(k)}>
                              Revoke
                            </Button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p className="mt-2 text-xs text-slate-400">No keys yet.</p>
              )}
            </li>
          ))}
        </ul>
      </Card>
      <LabelAuthors authors={labelAuthors.filter((a) => !(users.data ?? []).some((u) => u.name === a.user_id))} />
    </div>
  );
}

/**
 * Names with labels that are no person on this page: "default" (labels made while the server was open, before
 * any key) and names an open server was told. Agreement between annotators counts each as a person (issue 51).
 */
function LabelAuthors({ authors }: { authors: LabelAuthor[] }) {
  if (authors.length === 0) return null;
  return (
    <Card data-testid="label-authors">
      <CardHeader
        title="Labels by names with no person"
        description="Their labels count in agreement between annotators as one more person each; they have no role and no key, and cannot sign in."
      />
      <ul className="divide-y divide-slate-100" aria-label="Labels by names with no person">
        {authors.map((a) => (
          <li key={a.user_id} className="px-5 py-3 text-sm" data-testid={`label-author-${a.user_id}`}>
            <span className="font-medium text-slate-900">{a.user_id}</span>{" "}
            <span className="text-slate-600">
              · {a.labels.toLocaleString("en")} current label{a.labels === 1 ? "" : "s"} on {a.datasets} dataset{a.datasets === 1 ? "" : "s"}
            </span>
            <p className="mt-1 text-xs text-slate-500">
              {a.who === "before_keys"
                ? "Labels made while the server was open, before any key or API_TOKEN: the one-person mode's user. The name is reserved, so no person can take it."
                : a.user_id === "admin"
                  ? "The API_TOKEN's user: labels made with the token itself. The name is reserved."
                  : "A name the open server was told (x-user-id) before keys were required. Adding a person of this name makes the labels theirs."}
            </p>
          </li>
        ))}
      </ul>
    </Card>
  );
}

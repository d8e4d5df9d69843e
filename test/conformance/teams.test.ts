import { emulator, http, TestEmulator } from "../helpers/emulator";

/** Teams, their roles and members, and subaccounts, as emulator/TEAMS.md says, over HTTP. */
describe("teams", () => {
  let emu: TestEmulator;
  let owner: { id: number; key: string };
  const as = (key: string) => (method: string, path: string, body?: unknown) => http(emu.url, method, path, { key, body });
  const readOnly = { api: { instance_read: {} } };

  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    owner = emu.account(`owner-${Math.random().toString(36).slice(2)}@teams.test`);
  });
  const team = async (name = `team-${Math.random().toString(36).slice(2)}`) => {
    expect(await as(owner.key)("POST", "/api/v0/team/", { team_name: name, transfer_credit: 0 })).toMatchObject({ status: 200, body: { success: true, msg: "Team Successfully Created!" } });
    return name;
  };
  /** A member in the team: an account invited with `role`, accepting (the control API plays the invitee); their key in the team. */
  const member = async (teamName: string, role: string) => {
    const invitee = emu.account(`member-${Math.random().toString(36).slice(2)}@teams.test`);
    const email = emu.marketplace.accounts.user(invitee.id)!.email;
    expect(await as(owner.key)("POST", "/api/v0/team/invite/", { email, role })).toMatchObject({ status: 200, body: { msg: `New invitation sent to ${email}` } });
    const accepted = await http(emu.url, "POST", "/_emulator/team-invitations/accept", { body: { team: teamName, email } });
    expect(accepted.status).toBe(200);
    return { id: invitee.id, email, key: accepted.body.api_key as string };
  };

  it("makes the key's account a team (one an account, names unique), with default roles; its own SSH keys are refused then", async () => {
    const call = as(owner.key);
    const name = await team();
    expect(await call("POST", "/api/v0/team/", { team_name: "other" })).toMatchObject({ status: 400 });
    const second = emu.account("second@teams.test");
    expect(await as(second.key)("POST", "/api/v0/team/", { team_name: name })).toMatchObject({ status: 400, body: { msg: "Team name already exists" } });
    const roles = (await call("GET", "/api/v0/team/roles-full/")).body;
    expect(roles.map((r: any) => r.name)).toEqual(["manager", "member"]);
    expect(await call("GET", "/api/v0/ssh/")).toMatchObject({ status: 400, body: { error: "team_ssh_keys_not_supported" } });
    expect(await as(second.key)("GET", "/api/v0/team/members/")).toMatchObject({ status: 404 });
  });

  it("creates, shows, changes (by id) and removes roles; refuses an unknown category and the owner's role", async () => {
    const call = as(owner.key);
    await team();
    expect(await call("POST", "/api/v0/team/roles/", { name: "ci", permissions: readOnly })).toMatchObject({ status: 200, body: { msg: "success" } });
    const shown = (await call("GET", "/api/v0/team/roles/ci/")).body;
    expect(shown).toMatchObject({ name: "ci", permissions: readOnly });
    expect(await call("PUT", `/api/v0/team/roles/${shown.id}/`, { name: "deploy", permissions: { api: { instance_read: {}, instance_write: {} } } })).toMatchObject({
      status: 200, body: "Successfully Updated Team Role For deploy",
    });
    expect((await call("PUT", `/api/v0/team/roles/${shown.id}/`, { name: "deploy" })).headers.get("content-type")).toMatch(/^application\/json/);
    expect((await call("GET", "/api/v0/team/roles/deploy/")).body).toMatchObject({ id: shown.id, permissions: { api: { instance_write: {} } } });
    expect(await call("POST", "/api/v0/team/roles/", { name: "bad", permissions: { api: { gpu_admin: {} } } })).toMatchObject({ status: 400, body: { msg: expect.stringMatching(/gpu_admin/) } });
    expect(await call("POST", "/api/v0/team/roles/", { name: "bad" })).toMatchObject({ status: 400 });
    expect(await call("DELETE", "/api/v0/team/roles/owner/")).toMatchObject({ status: 403 });
    expect(await call("DELETE", "/api/v0/team/roles/deploy/")).toMatchObject({ status: 200, body: { status: "success" } });
    expect(await call("GET", "/api/v0/team/roles/deploy/")).toMatchObject({ status: 404 });
  });

  it("invites by email (body or query), lists and removes members; a member's key can what its role can, as the role changes", async () => {
    const call = as(owner.key);
    const name = await team();
    await call("POST", "/api/v0/team/roles/", { name: "reader", permissions: readOnly });
    const reader = await member(name, "reader");
    const asMember = as(reader.key);
    expect((await asMember("GET", "/api/v1/instances/")).status).toBe(200);
    expect(await asMember("POST", "/api/v0/team/roles/", { name: "x", permissions: readOnly })).toMatchObject({ status: 403 });
    expect(await asMember("DELETE", "/api/v0/team/")).toMatchObject({ status: 403 });
    const { id } = (await call("GET", "/api/v0/team/roles/reader/")).body;
    await call("PUT", `/api/v0/team/roles/${id}/`, { permissions: { api: { instance_read: {}, team_read: {} } } });
    expect((await asMember("GET", "/api/v0/team/members/")).body).toEqual([
      expect.objectContaining({ id: owner.id, roles: ["owner"] }),
      expect.objectContaining({ id: reader.id, email: reader.email, roles: ["reader"] }),
    ]);
    // The public client's form: the query, and `{}`.
    const invitee = emu.account("query@teams.test");
    expect(await http(emu.url, "POST", `/api/v0/team/invite/?email=query%40teams.test&role=reader`, { key: owner.key, body: {} })).toMatchObject({ status: 200 });
    expect(await call("POST", "/api/v0/team/invite/", { email: "query@teams.test", role: "reader" })).toMatchObject({ status: 429 });
    expect(await call("POST", "/api/v0/team/invite/", { email: "nobody@teams.test", role: "reader" })).toMatchObject({ status: 404 });
    expect(await call("POST", "/api/v0/team/invite/", { email: reader.email, role: "reader" })).toMatchObject({ status: 400, body: { msg: "User is already a member of this team." } });
    expect(await call("DELETE", `/api/v0/team/roles/reader/`)).toMatchObject({ status: 400 });
    expect(await call("DELETE", `/api/v0/team/members/${owner.id}/`)).toMatchObject({ status: 400 });
    expect(await call("DELETE", `/api/v0/team/members/${reader.id}/`)).toMatchObject({ status: 200, body: { status: "success" } });
    expect((await asMember("GET", "/api/v1/instances/")).status).toBe(401);
    expect(await call("DELETE", `/api/v0/team/members/${invitee.id}/`)).toMatchObject({ status: 404 });
    expect(await call("DELETE", "/api/v0/team/")).toMatchObject({ status: 200, body: { success: true, msg: "Team Successfully Deleted!" } });
    expect(await call("GET", "/api/v0/team/roles-full/")).toMatchObject({ status: 404 });
  });

  it("subaccounts: made with a key of their own, listed, never deleted; a bad email or one in use is refused", async () => {
    const call = as(owner.key);
    const made = await call("POST", "/api/v0/users/", { email: "sub@teams.test", username: "sub", password: "s3cret-pass", host_only: false, parent_id: "me" });
    expect(made).toMatchObject({ status: 200, body: { username: "sub", email: "sub@teams.test", key_id: expect.any(Number) } });
    expect((await call("GET", "/api/v0/subaccounts/?owner=me")).body.users).toEqual([
      { id: made.body.id, parent_id: owner.id, key_id: made.body.key_id, created_at: expect.any(String), deleted_at: null },
    ]);
    expect(await call("POST", "/api/v0/users/", { email: "sub@teams.test", username: "again", password: "x", parent_id: "me" })).toMatchObject({ status: 409, body: { error: "user_exists" } });
    expect(await call("POST", "/api/v0/users/", { email: "me@vast.ai", username: "v", password: "x", parent_id: "me" })).toMatchObject({ status: 400, body: { error: "invalid_email" } });
    expect(JSON.stringify(emu.marketplace.accounts.snapshot())).not.toContain("s3cret-pass");
  });
});

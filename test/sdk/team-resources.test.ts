import { direct, SUBACCOUNT, TEAM, TEAM_MEMBER, TEAM_ROLE } from "../../provider/lifecycle";
import { GpuRentalClient, REAL_TIME } from "../../sdk";
import { GET_TEAM_ROLES } from "../../provider/lifecycle/get-team-roles";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const [Team, TeamRole, TeamMember, Subaccount] = [direct(TEAM), direct(TEAM_ROLE), direct(TEAM_MEMBER), direct(SUBACCOUNT)];
const reader = { api: { instance_read: {} } };

describe("Team, TeamRole, TeamMember and Subaccount: what preview refuses, naming the input", () => {
  const reasons = (kind: typeof TeamRole | typeof TeamMember | typeof Subaccount, news: Record<string, unknown>) => kind.check(news).failures.map((f) => `${f.property}: ${f.reason}`);

  it("a permission category that does not exist, the owner's role, an email that is not one or of the service's domain", () => {
    expect(reasons(TeamRole, { name: "ci", permissions: reader })).toEqual([]);
    expect(reasons(TeamRole, { name: "ci", permissions: { api: { gpu_admin: {} } } })).toEqual([expect.stringMatching(/^permissions: .*gpu_admin/)]);
    expect(reasons(TeamRole, { name: "owner", permissions: reader })).toEqual([expect.stringMatching(/^name: .*owner is the team's own role/)]);
    expect(reasons(TeamMember, { email: "not-an-email", role: "ci" })).toEqual([expect.stringMatching(/^email: /)]);
    expect(reasons(Subaccount, { email: "me@vast.ai", username: "me", password: "pw" })).toEqual([expect.stringMatching(/^email: .*own domain/)]);
  });

  it("a role's name and permissions change in place; a member's email or role, and anything of a subaccount, replace", () => {
    const olds = { name: "ci", permissions: reader, roleId: 4 };
    expect(TeamRole.diff(olds, { name: "ci", permissions: { api: { instance_read: {} } } })).toMatchObject({ changes: false });
    expect(TeamRole.diff(olds, { name: "deploy", permissions: { api: { instance_write: {} } } })).toEqual({ changes: true, replaces: [], updates: ["name", "permissions"], deleteBeforeReplace: false });
    expect(TeamMember.diff({ email: "a@x.io", role: "ci" }, { email: "a@x.io", role: "deploy" })).toMatchObject({ replaces: ["role"] });
    expect(Subaccount.diff({ email: "a@x.io", username: "a", password: "p" }, { email: "a@x.io", username: "a", password: "q" })).toMatchObject({ replaces: ["password"] });
  });
});

describe("a team as code, over HTTP", () => {
  let emu: TestEmulator;
  let client: GpuRentalClient;
  let ownerId: number;
  beforeAll(async () => {
    emu = await emulator();
    const owner = emu.account("owner@team-resources.test");
    ownerId = owner.id;
    client = emu.client({ apiKey: owner.key });
  });
  afterAll(() => emu.close());
  const options = () => ({ client });
  const team = () => emu.marketplace.accounts.user(ownerId)!.team;

  it("makes the account a team, shapes its roles and members, and takes it all down again", async () => {
    const { id: teamId, outs: teamOuts } = await Team.create({ name: "research" }, options());
    expect(team()).toMatchObject({ name: "research" });
    expect(await Team.read(teamId, teamOuts, options())).toEqual({ name: "research", accountId: ownerId });

    const { id: roleId, outs } = await TeamRole.create({ name: "ci", permissions: reader }, options());
    expect(outs).toEqual({ name: "ci", permissions: reader, roleId: Number(roleId) });
    const widened = { api: { instance_read: {}, instance_write: {} } };
    expect(await TeamRole.update(roleId, outs, { name: "deploy", permissions: widened }, options())).toEqual({ name: "deploy", permissions: widened, roleId: Number(roleId) });
    expect(team()!.roles.find((r) => r.id === Number(roleId))).toMatchObject({ name: "deploy", permissions: widened });
    // A change by hand shows on refresh; an import declares the role as it is.
    await client.teamRoles.update(Number(roleId), { permissions: reader });
    expect(await TeamRole.read(roleId, { name: "deploy", permissions: widened }, options())).toMatchObject({ permissions: reader });
    expect(await TeamRole.import(roleId, options())).toEqual({ inputs: { name: "deploy", permissions: reader }, outs: { name: "deploy", permissions: reader, roleId: Number(roleId) } });
    const op = { client, clock: REAL_TIME, log: () => undefined, spendCap: () => undefined };
    expect(await GET_TEAM_ROLES.invoke({}, op)).toEqual({ roles: [expect.objectContaining({ name: "manager" }), expect.objectContaining({ name: "member" }), { id: Number(roleId), name: "deploy", permissions: reader }] });

    const invitee = emu.account("member@team-resources.test");
    const { id: email, outs: memberOuts } = await TeamMember.create({ email: "member@team-resources.test", role: "deploy" }, options());
    expect(memberOuts).toMatchObject({ userId: null, status: "invited" });
    expect(await TeamMember.read(email, memberOuts, options())).toMatchObject({ status: "invited" });
    await http(emu.url, "POST", "/_emulator/team-invitations/accept", { body: { team: "research", email } });
    expect(await TeamMember.read(email, memberOuts, options())).toMatchObject({ userId: invitee.id, status: "member", role: "deploy" });
    await TeamMember.delete(email, options());
    expect(team()!.members).toEqual([]);

    await TeamRole.delete(roleId, options());
    expect(await TeamRole.read(roleId, outs, options())).toBeNull();
    await Team.delete(teamId, options());
    expect(team()).toBeUndefined();
    expect(await Team.read(teamId, teamOuts, options())).toBeNull();
  });

  it("a subaccount: made, read, and on destroy left on the service, as preview says", async () => {
    expect(await Subaccount.warnings({ email: "sub@team-resources.test", username: "sub", password: "pw" }, options())).toEqual([expect.stringMatching(/destroy leaves it on the service/)]);
    const { id, outs } = await Subaccount.create({ email: "sub@team-resources.test", username: "sub", password: "pw-secret" }, options());
    expect(outs).toMatchObject({ subaccountId: Number(id), keyId: expect.any(Number) });
    expect(await Subaccount.read(id, outs, options())).toMatchObject({ subaccountId: Number(id) });
    const lines: string[] = [];
    await Subaccount.delete(id, { ...options(), log: (line: string) => lines.push(line) });
    expect(lines).toEqual([expect.stringMatching(/destroy leaves it on the service/)]);
    expect(await Subaccount.read(id, outs, options())).toMatchObject({ subaccountId: Number(id) });
    await expect(Subaccount.import(id, options())).rejects.toThrow(/cannot be imported.*adoptId/);
  });
});

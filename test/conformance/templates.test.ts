import { emulator, http, TestEmulator } from "../helpers/emulator";

const LOGIN = { docker_login_repo: "", docker_login_user: "", docker_login_pass: "" };

/** Spec: Template (fields, identifiers, search fields), Endpoints › Templates, Instance creation rules 2-6. */
describe("templates", () => {
  let emu: TestEmulator;
  let other: string; // a second user's key
  const call = (method: string, path: string, body?: unknown, key = emu.apiKey) => http(emu.url, method, path, { key, body });
  const find = (filters: unknown, key = emu.apiKey) =>
    call("GET", `/api/v0/template/?select_filters=${encodeURIComponent(JSON.stringify(filters))}`, undefined, key);
  const post = async (fields: Record<string, unknown>, key = emu.apiKey) => {
    const res = await call("POST", "/api/v0/template/", { ...LOGIN, ...fields }, key);
    expect(res.status).toBe(200);
    return res.body.template;
  };

  beforeEach(async () => {
    emu = await emulator();
    const user = emu.marketplace.accounts.addUser({ email: "other@gpu-rental.test" });
    other = emu.marketplace.accounts.issueKey(user.id).key;
  });
  afterEach(() => emu.close());

  describe("create (POST)", () => {
    it("applies the defaults: tag latest, runtype args, recommended_disk_space 8; answers {template: {id, hash_id, ...}}", async () => {
      const t = await post({ name: "mine", image: "ubuntu" });
      expect(t).toMatchObject({
        id: expect.any(Number), hash_id: expect.stringMatching(/^[0-9a-f]{32}$/), name: "mine", image: "ubuntu", tag: "latest",
        default_tag: "latest", runtype: "args", recommended_disk_space: 8, private: false, count_created: 0,
        creator_id: emu.marketplace.seededUser.id, created_at: emu.marketplace.clock.nowSeconds(), recommended: false,
      });
    });

    it.each(["name", "image"])("requires %s", async (field) => {
      const body: Record<string, unknown> = { name: "n", image: "i", ...LOGIN };
      delete body[field];
      const res = await call("POST", "/api/v0/template/", body);
      expect(res.status).toBe(400);
      expect(res.body.msg).toContain(field);
    });

    // The spec asks for the three registry fields; the public Python client sends none of them (or null), and the
    // service creates the template anyway (docs/service-facts.md#requests-real-clients-send): they are empty.
    it.each([{}, { docker_login_repo: null, docker_login_user: null, docker_login_pass: null }])(
      "takes a creation without the docker_login_* fields, as empty (%j)",
      async (login) => {
        const t = await post({ name: "no login", image: "ubuntu", ...login });
        expect(t).toMatchObject({ docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
        expect(t.hash_id).toBe((await post({ name: "no login", image: "ubuntu", ...LOGIN })).hash_id);
      },
    );

    it("the same content gives the same hash (and the same template); other content another hash", async () => {
      const a = await post({ name: "same", image: "ubuntu", env: "-e A=1" });
      const b = await post({ name: "same", image: "ubuntu", env: "-e A=1" });
      expect(b).toEqual(a);
      const explicitDefaults = await post({ name: "same", image: "ubuntu", env: "-e A=1", tag: "latest", runtype: "args" });
      expect(explicitDefaults.hash_id).toBe(a.hash_id);
      const c = await post({ name: "same", image: "ubuntu", env: "-e A=2" });
      expect(c.hash_id).not.toBe(a.hash_id);
      expect(c.id).not.toBe(a.id);
    });

    it("the registry password is no part of the hash: the same content with another password is the same template, with that password", async () => {
      const registry = { name: "reg", image: "ghcr.io/acme/app", docker_login_repo: "ghcr.io", docker_login_user: "acme" };
      const a = await post({ ...registry, docker_login_pass: "first-password" });
      const b = await post({ ...registry, docker_login_pass: "second-password" });
      expect(b.hash_id).toBe(a.hash_id);
      expect(b.id).toBe(a.id);
      expect(b.docker_login_pass).toBe("second-password");
      // A public template's hash tells nothing of its password: it is the hash of the same content without one.
      const other = emu.marketplace.templates.create(999, { ...registry, docker_login_pass: "" });
      expect(emu.marketplace.templates.create(999, { ...registry, docker_login_pass: "guess" }).hash_id).toBe(other.hash_id);
    });

    it("refuses an env flag string it cannot read", async () => {
      const res = await call("POST", "/api/v0/template/", { name: "n", image: "i", ...LOGIN, env: "-e \"unterminated" });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/quote/);
    });
  });

  describe("search (GET with select_filters)", () => {
    it("without filters lists the service's recommended templates and your own", async () => {
      await post({ name: "mine", image: "ubuntu" });
      const res = await call("GET", "/api/v0/template/");
      expect(res.status).toBe(200);
      const names = res.body.templates.map((t: any) => t.name);
      expect(names).toEqual(expect.arrayContaining(["PyTorch (CUDA)", "NVIDIA CUDA", "mine"]));
    });

    it("filters with operators over every template search field, values coerced", async () => {
      const mine = await post({ name: "mine", image: "ubuntu", tag: "22.04", ssh_direct: true, use_ssh: true, jup_direct: false, recommended_disk_space: 20, docker_login_repo: "ghcr.io", docker_login_user: "u", docker_login_pass: "p" });
      const me = emu.marketplace.seededUser.id;
      const cases: [Record<string, unknown>, (t: any) => boolean][] = [
        [{ creator_id: { eq: String(me) } }, (t) => t.creator_id === me],
        [{ created_at: { lte: emu.marketplace.clock.nowSeconds() } }, () => true],
        [{ count_created: { gte: 0 } }, () => true],
        [{ default_tag: { eq: "22.04" } }, (t) => t.default_tag === "22.04"],
        [{ docker_login_repo: { eq: "ghcr.io" } }, (t) => t.docker_login_repo === "ghcr.io"],
        [{ id: { in: [String(mine.id), 1] } }, (t) => t.id === mine.id || t.id === 1],
        [{ image: { neq: "ubuntu" } }, (t) => t.image !== "ubuntu"],
        [{ jup_direct: { eq: "true" } }, (t) => t.jup_direct === true],
        [{ hash_id: { eq: mine.hash_id } }, (t) => t.id === mine.id],
        [{ name: { in: ["mine", "NVIDIA CUDA"] } }, (t) => ["mine", "NVIDIA CUDA"].includes(t.name)],
        [{ recent_create_date: { eq: null } }, (t) => t.recent_create_date === null],
        [{ recommended_disk_space: { gt: 16, lt: 64 } }, (t) => t.recommended_disk_space > 16 && t.recommended_disk_space < 64],
        [{ recommended: { eq: true } }, (t) => t.recommended === true],
        [{ ssh_direct: { eq: 1 } }, (t) => t.ssh_direct === true],
        [{ tag: { notin: ["latest"] } }, (t) => t.tag !== "latest"],
        [{ use_ssh: { eq: false } }, (t) => t.use_ssh === false],
      ];
      const all = (await call("GET", "/api/v0/template/")).body.templates as any[];
      for (const [filters, expected] of cases) {
        const res = await find(filters);
        expect(res.status).toBe(200);
        expect(res.body.templates.map((t: any) => t.id).sort()).toEqual(all.filter(expected).map((t) => t.id).sort());
      }
      expect((await find({ no_such_field: { eq: 1 } })).body.templates).toHaveLength(all.length);
    });

    it("private templates are visible to their creator only; registry passwords to the creator only", async () => {
      const secret = await post({ name: "secret", image: "ubuntu", private: true, docker_login_user: "bob", docker_login_pass: "tok", docker_login_repo: "ghcr.io" });
      expect(secret.docker_login_pass).toBe("tok");
      expect((await find({ name: { eq: "secret" } })).body.templates).toHaveLength(1);
      expect((await find({ name: { eq: "secret" } }, other)).body.templates).toHaveLength(0);
      const shared = await post({ name: "shared", image: "ubuntu", docker_login_user: "bob", docker_login_pass: "tok", docker_login_repo: "ghcr.io" });
      const seen = (await find({ id: { eq: shared.id } }, other)).body.templates[0];
      expect(seen.docker_login_user).toBe("bob");
      expect(seen).not.toHaveProperty("docker_login_pass");
    });

    it("needs the user_read permission", async () => {
      const scoped = emu.marketplace.accounts.issueKey(emu.marketplace.seededUser.id, { permissions: { api: { misc: {}, instance_read: {} } } }).key;
      expect((await call("GET", "/api/v0/template/", undefined, scoped)).status).toBe(403);
      const reader = emu.marketplace.accounts.issueKey(emu.marketplace.seededUser.id, { permissions: { api: { user_read: {} } } }).key;
      expect((await call("GET", "/api/v0/template/", undefined, reader)).status).toBe(200);
      expect((await call("POST", "/api/v0/template/", { name: "n", image: "i", ...LOGIN }, reader)).status).toBe(403);
    });

    it("refuses select_filters that are not JSON or not filters, with 400", async () => {
      const bad = await call("GET", "/api/v0/template/?select_filters=%7Bnot-json");
      expect(bad.status).toBe(400);
      expect(bad.body.msg).toMatch(/select_filters/);
      expect((await find({ name: "plain value" })).status).toBe(400);
      expect((await find({ name: { like: "x" } })).status).toBe(400);
      expect((await find({ id: { eq: "abc" } })).status).toBe(400);
    });
  });

  describe("edit (PUT) and delete (DELETE)", () => {
    it("changes only the fields given and returns a new, content-derived hash_id", async () => {
      const t = await post({ name: "edit me", image: "ubuntu", env: "-e A=1", onstart: "echo 1" });
      const res = await call("PUT", "/api/v0/template/", { hash_id: t.hash_id, onstart: "echo 2" });
      expect(res.status).toBe(200);
      const edited = res.body.template;
      expect(edited).toMatchObject({ id: t.id, name: "edit me", env: "-e A=1", onstart: "echo 2" });
      expect(edited.hash_id).not.toBe(t.hash_id);
      // The old hash no longer names it; editing back gives the old hash again.
      expect((await call("PUT", "/api/v0/template/", { hash_id: t.hash_id, onstart: "x" })).status).toBe(404);
      const back = (await call("PUT", "/api/v0/template/", { hash_id: edited.hash_id, onstart: "echo 1" })).body.template;
      expect(back.hash_id).toBe(t.hash_id);
    });

    it("an edit of the password alone keeps the hash_id; the template has the new password", async () => {
      const t = await post({ name: "reg", image: "ghcr.io/acme/app", docker_login_repo: "ghcr.io", docker_login_user: "acme", docker_login_pass: "old" });
      const res = await call("PUT", "/api/v0/template/", { hash_id: t.hash_id, docker_login_pass: "new" });
      expect(res.status).toBe(200);
      expect(res.body.template).toMatchObject({ id: t.id, hash_id: t.hash_id, docker_login_pass: "new" });
      expect((await find({ hash_id: { eq: t.hash_id } })).body.templates[0].docker_login_pass).toBe("new");
    });

    it("only the creator may edit or delete", async () => {
      const t = await post({ name: "mine", image: "ubuntu" });
      expect((await call("PUT", "/api/v0/template/", { hash_id: t.hash_id, name: "theirs" }, other)).status).toBe(403);
      expect((await call("DELETE", "/api/v0/template/", { template_id: t.id }, other)).status).toBe(403);
    });

    it("an edit onto another template's content is refused", async () => {
      const a = await post({ name: "a", image: "ubuntu" });
      await post({ name: "b", image: "ubuntu" });
      const res = await call("PUT", "/api/v0/template/", { hash_id: a.hash_id, name: "b" });
      expect(res).toMatchObject({ status: 400, body: { error: "duplicate_template" } });
    });

    it("deletes by numeric template_id, or by hash_id", async () => {
      const a = await post({ name: "a", image: "ubuntu" });
      const b = await post({ name: "b", image: "ubuntu" });
      expect(await call("DELETE", "/api/v0/template/", { template_id: a.id })).toMatchObject({ status: 200, body: { success: true } });
      expect(await call("DELETE", "/api/v0/template/", { hash_id: b.hash_id })).toMatchObject({ status: 200, body: { success: true } });
      expect((await find({ id: { in: [a.id, b.id] } })).body.templates).toHaveLength(0);
      expect((await call("DELETE", "/api/v0/template/", { template_id: a.id })).status).toBe(404);
      expect((await call("DELETE", "/api/v0/template/", { template_id: a.hash_id })).status).toBe(400);
    });
  });

  describe("instance creation from a template", () => {
    const anOffer = async () => (await call("POST", "/api/v0/bundles/", { order: [["dph_total", "asc"]], limit: 1 })).body.offers[0];
    const createFrom = async (body: Record<string, unknown>) => {
      const res = await call("PUT", `/api/v0/asks/${(await anOffer()).id}/`, body);
      expect(res.status).toBe(200);
      return (await call("GET", `/api/v0/instances/${res.body.new_contract}/`)).body.instances;
    };

    it("takes the template's values: image:tag, runtype, onstart, disk, env, ports, credentials", async () => {
      const t = await post({
        name: "web", image: "ghcr.io/acme/web", tag: "1.2", runtype: "jupyter", jup_direct: true, onstart: "start.sh",
        env: "-e MODE=prod -e 'GREETING=hello world' -p 8081:8081", recommended_disk_space: 30, jupyter_dir: "/srv",
        use_jupyter_lab: true, docker_login_repo: "ghcr.io", docker_login_user: "acme", docker_login_pass: "registry-secret-tok",
      });
      const instance = await createFrom({ template_hash_id: t.hash_id });
      expect(instance).toMatchObject({
        template_hash_id: t.hash_id, image_uuid: "ghcr.io/acme/web:1.2", image_runtype: "jupyter_direct", onstart: "start.sh",
        disk_space: 30, jupyter_dir: "/srv", use_jupyter_lab: true, docker_login_user: "acme", docker_login_repo: "ghcr.io",
      });
      expect(instance.extra_env).toEqual(expect.arrayContaining([["MODE", "prod"], ["GREETING", "hello world"]]));
      expect(Object.keys(instance.ports).sort()).toEqual(["22/tcp", "8080/tcp", "8081/tcp"]);
      expect(JSON.stringify(instance)).not.toContain("registry-secret-tok");
    });

    it("scalars in the request override; env and extra_filters merge by key, request wins", async () => {
      const t = await post({
        name: "base", image: "ubuntu", runtype: "ssh", ssh_direct: true, onstart: "a.sh", env: "-e KEEP=1 -e OVERRIDE=template",
        extra_filters: { gpu_ram: { gte: 8000 }, verified: { eq: true } },
      });
      const instance = await createFrom({
        template_hash_id: t.hash_id, image: "debian:12", onstart: "b.sh", disk: 12, runtype: "ssh_proxy",
        env: { OVERRIDE: "request", NEW: "2" }, extra_filters: { gpu_ram: { gte: 24000 }, num_gpus: { eq: 1 } },
      });
      expect(instance).toMatchObject({ image_uuid: "debian:12", onstart: "b.sh", disk_space: 12, image_runtype: "ssh_proxy" });
      expect(Object.fromEntries(instance.extra_env)).toEqual({ KEEP: "1", OVERRIDE: "request", NEW: "2" });
      expect(instance.extra_filters).toEqual({ gpu_ram: { gte: 24000 }, verified: { eq: true }, num_gpus: { eq: 1 } });
    });

    it("counts its use; an unknown, old or someone else's private hash is 404 no_such_template", async () => {
      const t = await post({ name: "popular", image: "ubuntu" });
      await createFrom({ template_hash_id: t.hash_id });
      emu.marketplace.clock.advance(1000);
      await createFrom({ template_hash_id: t.hash_id });
      const after = (await find({ id: { eq: t.id } })).body.templates[0];
      expect(after).toMatchObject({ count_created: 2, recent_create_date: emu.marketplace.clock.nowSeconds() });
      const offer = await anOffer();
      expect(await call("PUT", `/api/v0/asks/${offer.id}/`, { template_hash_id: "0".repeat(32) })).toMatchObject({ status: 404, body: { error: "no_such_template" } });
      const hidden = await post({ name: "hidden", image: "ubuntu", private: true }, other);
      expect((await call("PUT", `/api/v0/asks/${offer.id}/`, { template_hash_id: hidden.hash_id })).status).toBe(404);
      // Nothing was rented by the refusals.
      expect((await anOffer()).id).toBe(offer.id);
    });

    it("a volume_info stored in the template has no effect", async () => {
      const t = await post({ name: "v", image: "ubuntu", volume_info: { create_new: true, volume_id: 70000, size: 10, mount_path: "/d" } });
      const instance = await createFrom({ template_hash_id: t.hash_id });
      expect(instance.volume_info).toBeNull();
      expect((await call("GET", "/api/v0/volumes/")).body.volumes).toHaveLength(0);
    });
  });

  it("the SDK functions cover every template endpoint", async () => {
    const client = emu.client();
    const created = await client.templates.create({ name: "sdk", image: "ubuntu", ...LOGIN });
    expect(created.tag).toBe("latest");
    const edited = await client.templates.edit(created.hash_id, { desc: "changed" });
    expect(edited.hash_id).not.toBe(created.hash_id);
    expect(await client.templates.search({ hash_id: { eq: edited.hash_id } })).toHaveLength(1);
    await client.templates.delete({ id: edited.id });
    expect(await client.templates.search({ id: { eq: edited.id } })).toHaveLength(0);
    const again = await client.templates.create({ name: "sdk2", image: "ubuntu", ...LOGIN });
    await client.templates.delete({ hashId: again.hash_id });
    expect(await client.templates.search({ name: { eq: "sdk2" } })).toHaveLength(0);
  });
});

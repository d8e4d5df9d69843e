import * as http from "node:http";
import { startSecretsKeeper } from "../cli/secrets-keeper";

/** The key service of throwaway stacks (cli/secrets-keeper.ts), spoken to as Pulumi's hashivault provider speaks. */
describe("the secrets keeper of throwaway stacks", () => {
  const call = async (env: Record<string, string>, route: string, body: unknown, token = env.VAULT_SERVER_TOKEN) => {
    const res = await fetch(`${env.VAULT_SERVER_URL}/v1/transit/${route}`, { method: "PUT", body: JSON.stringify(body), headers: { "x-vault-token": token } });
    return { status: res.status, body: await res.json() };
  };

  it("seals and opens a data key under its own key, refuses another token, and another keeper's ciphertext", async () => {
    const [keeper, other] = [await startSecretsKeeper(), await startSecretsKeeper()];
    try {
      const key = Buffer.from("a data key of thirty-two bytes!!").toString("base64");
      const name = keeper.provider.replace("hashivault://", "");
      const sealed = await call(keeper.env, `encrypt/${name}`, { plaintext: key });
      expect(sealed).toMatchObject({ status: 200, body: { data: { ciphertext: expect.stringMatching(/^vault:v1:/) } } });
      expect(sealed.body.data.ciphertext).not.toContain(key);
      expect(await call(keeper.env, `decrypt/${name}`, { ciphertext: sealed.body.data.ciphertext })).toEqual({ status: 200, body: { data: { plaintext: key } } });
      expect((await call(keeper.env, `decrypt/${name}`, { ciphertext: sealed.body.data.ciphertext }, "not-the-token")).status).toBe(403);
      expect((await call(other.env, `decrypt/${name}`, { ciphertext: sealed.body.data.ciphertext })).status).toBe(400);
    } finally {
      await Promise.all([keeper.close(), other.close()]);
    }
  });

  it("ends each connection once it has answered, so a client that keeps connections never reuses one it closes", async () => {
    const keeper = await startSecretsKeeper();
    const agent = new http.Agent({ keepAlive: true });
    try {
      const ports: number[] = [];
      for (let i = 0; i < 2; i++) {
        const answered = await new Promise<{ connection?: string; port?: number }>((resolve, reject) => {
          const req = http.request(`${keeper.env.VAULT_SERVER_URL}/v1/transit/encrypt/gpu-rental-stack`, { method: "PUT", agent, headers: { "x-vault-token": keeper.env.VAULT_SERVER_TOKEN } }, (res) => {
            res.resume();
            res.on("end", () => resolve({ connection: res.headers.connection, port: req.socket?.localPort }));
          });
          req.on("error", reject);
          req.end(JSON.stringify({ plaintext: "AAAA" }));
        });
        expect(answered.connection).toBe("close");
        ports.push(answered.port!);
      }
      // The agent, which keeps what a server lets it keep, had to open a second connection.
      expect(ports[1]).not.toBe(ports[0]);
    } finally {
      agent.destroy();
      await keeper.close();
    }
  });
});

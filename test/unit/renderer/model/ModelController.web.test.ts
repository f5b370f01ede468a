import { describe, expect, it } from "vitest";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../../contract/models.js";
import { ModelController } from "../../../../renderer/model/ModelController.js";
import { RpcError } from "../../../../renderer/rpc/RpcError.js";
import { createEngineStore } from "../../../../renderer/stores/engineStore.js";
import { createModelStore } from "../../../../renderer/stores/modelStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { FakeRpc } from "../FakeRpc.js";

const facts = { path: "/m/tiny.gguf", fileName: "tiny.gguf", architecture: "llama" } as ModelFacts;

function setup(): {
    rpc: FakeRpc;
    controller: ModelController;
    model: ReturnType<typeof createModelStore>;
    engine: ReturnType<typeof createEngineStore>;
    turns: ReturnType<typeof createTurnStore>;
} {
    const rpc = new FakeRpc();
    const model = createModelStore();
    const engine = createEngineStore();
    const turns = createTurnStore();
    return { rpc, controller: new ModelController(rpc, { model, engine, turns }), model, engine, turns };
}

describe("ModelController", () => {
    it("inspects a trimmed path and keeps its facts", async () => {
        const { rpc, controller, model } = setup();
        rpc.answers.inspectModel = () => facts;
        await controller.inspect("  /m/tiny.gguf ");
        expect(rpc.calls).toEqual([{ method: "inspectModel", params: { path: "/m/tiny.gguf" } }]);
        expect(model.getState().inspection).toEqual({ running: false, path: "/m/tiny.gguf", facts });
    });

    it("keeps a refusal's code and message, and drops the previous facts", async () => {
        const { rpc, controller, model } = setup();
        rpc.answers.inspectModel = () => facts;
        await controller.inspect("/m/tiny.gguf");
        rpc.answers.inspectModel = () => {
            throw new RpcError("model_not_gguf", "/r/package.json is not a GGUF file.");
        };
        await controller.inspect("/r/package.json");
        expect(model.getState().inspection).toEqual({
            running: false,
            path: "/r/package.json",
            error: { code: "model_not_gguf", message: "/r/package.json is not a GGUF file." }
        });
    });

    it("asks for a path instead of calling with an empty one", async () => {
        const { rpc, controller, model } = setup();
        await controller.inspect("   ");
        expect(rpc.calls).toEqual([]);
        expect(model.getState().inspection.error?.code).toBe("invalid_request");
    });

    it("loads a model, and the engine store gets the new engine's info", async () => {
        const { rpc, controller, model, engine } = setup();
        const info = { modelName: "small" } as EngineInfo;
        rpc.answers.switchModel = () => info;
        expect(await controller.load("/m/small.gguf")).toBe(true);
        expect(rpc.calls).toEqual([{ method: "switchModel", params: { model: "/m/small.gguf" } }]);
        expect(engine.getState().info).toBe(info);
        expect(model.getState().loading).toEqual({ running: false });
    });

    it('the demo model is "tiny"; a failed switch keeps its code and leaves the engine\'s info alone', async () => {
        const { rpc, controller, model, engine } = setup();
        const before = { modelName: "tiny" } as EngineInfo;
        engine.setState({ info: before });
        rpc.answers.switchModel = () => {
            throw new RpcError("engine_start_failed", "The engine could not start: no memory.");
        };
        expect(await controller.loadDemo()).toBe(false);
        expect(rpc.calls).toEqual([{ method: "switchModel", params: { model: "tiny" } }]);
        expect(model.getState().loading).toEqual({
            running: false,
            model: "tiny",
            error: { code: "engine_start_failed", message: "The engine could not start: no memory." }
        });
        expect(engine.getState().info).toBe(before);
    });

    it("loads one model at a time, and counts the turns a switch would end", async () => {
        const { rpc, controller, turns } = setup();
        let answer!: (info: EngineInfo) => void;
        rpc.answers.switchModel = (() =>
            new Promise<EngineInfo>((resolve) => {
                answer = resolve;
            })) as never;
        const first = controller.load("/m/a.gguf");
        expect(await controller.load("/m/b.gguf")).toBe(false);
        answer({ modelName: "a" } as EngineInfo);
        expect(await first).toBe(true);
        expect(rpc.calls.map((call) => call.params)).toEqual([{ model: "/m/a.gguf" }]);

        expect(controller.numRunningTurns()).toBe(0);
        turns.getState().begin("w1", "r1");
        turns.getState().begin("w2", "r2");
        expect(controller.numRunningTurns()).toBe(2);
    });
});

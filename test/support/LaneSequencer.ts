import os from "node:os";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { expectedLaneSeconds, laneProjectNames, needsWholeMachine } from "./testLanes.js";

/** Single-lane files a run needs before pinning each lane to its own cores pays: one for each lane. */
const MIN_FILES_TO_PIN_LANES = 2;

/**
 * Orders a run so the slowest files start first. vitest's pool starts queued files in order
 * whenever a worker frees, and a heavy file takes whichever lane is free, so slowest first keeps
 * both lanes busy until the end. In the heavy group the files that hold both lanes go after every
 * single-lane file: once one starts it waits for the other lane's last file, and a single-lane file
 * queued behind it would wait too. Groups (`sequence.groupOrder`) keep their order.
 */
export class LaneSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
        const byGroup = new Map<number, TestSpecification[]>();
        for (const file of await super.sort(files)) {
            const order = file.project.config.sequence.groupOrder;
            byGroup.set(order, [...(byGroup.get(order) ?? []), file]);
        }
        const orders = [...byGroup.keys()].sort((a, b) => a - b);
        return orders.flatMap((order) => this.#sortGroup(byGroup.get(order) ?? []));
    }

    #sortGroup(files: TestSpecification[]): TestSpecification[] {
        const slowestFirst = [...files].sort((a, b) => this.#seconds(b) - this.#seconds(a));
        if (!files.every((file) => laneProjectNames.includes(file.project.name))) {
            return slowestFirst;
        }
        const singleLane = slowestFirst.filter((file) => !this.#wholeMachine(file));
        const wholeMachine = slowestFirst.filter((file) => this.#wholeMachine(file));
        // Pinning a lane to its cores pays only when the other lane has work: a run with one
        // single-lane file (one file, as while working on it) keeps every core.
        const pinTestLanes = singleLane.length >= MIN_FILES_TO_PIN_LANES;
        for (const file of files) {
            file.project.provide("pinTestLanes", pinTestLanes);
            file.project.provide("laneCoreCount", os.availableParallelism());
        }
        return [...singleLane, ...wholeMachine];
    }

    #wholeMachine(file: TestSpecification): boolean {
        return needsWholeMachine(file.project.name, this.#path(file));
    }

    #seconds(file: TestSpecification): number {
        return expectedLaneSeconds(this.#path(file));
    }

    #path(file: TestSpecification): string {
        return relative(this.ctx.config.root, file.moduleId);
    }
}

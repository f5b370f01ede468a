import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { expectedLaneSeconds, lanesOf, laneProjectNames, testLanes, type TestLane } from "./testLanes.js";

/**
 * Orders a run so the slowest files start first and the two lanes of the heavy group stay busy.
 * vitest's pool starts queued files in order whenever a worker frees, so the heavy files are queued
 * in the order their lanes are expected to free: each file's expected start is the sum of the files
 * before it in its lane. The files that hold both lanes go last, where the lanes meet anyway. Groups
 * (`sequence.groupOrder`) keep their order; within any other group the slowest files go first.
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
        const starts = new Map<TestSpecification, number>();
        const laneEnds = new Map<TestLane, number>(testLanes.map((lane) => [lane, 0]));
        const byLanesHeld = (file: TestSpecification): number => this.#lanes(file).length;
        for (const file of [...slowestFirst].sort((a, b) => byLanesHeld(a) - byLanesHeld(b))) {
            const lanes = this.#lanes(file);
            const start = Math.max(...lanes.map((lane) => laneEnds.get(lane) ?? 0));
            starts.set(file, start);
            for (const lane of lanes) {
                laneEnds.set(lane, start + this.#seconds(file));
            }
        }
        // Pinning a lane to its cores pays only when the other lane has work: a run of one lane's files
        // (one file, or one folder, as while working on them) keeps every core.
        const pinTestLanes = testLanes.every((lane) => files.some((file) => this.#lanes(file).join() === lane));
        for (const file of files) {
            file.project.provide("pinTestLanes", pinTestLanes);
        }
        return slowestFirst.sort((a, b) => (starts.get(a) ?? 0) - (starts.get(b) ?? 0));
    }

    #lanes(file: TestSpecification): readonly TestLane[] {
        return lanesOf(file.project.name, this.#path(file));
    }

    #seconds(file: TestSpecification): number {
        return expectedLaneSeconds(this.#path(file));
    }

    #path(file: TestSpecification): string {
        return relative(this.ctx.config.root, file.moduleId);
    }
}

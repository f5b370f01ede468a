import { describe, expect, it } from "vitest";
import { splitJobs, type HashJob } from "../../../../engine/pages/PageHasher.js";

const job = (index: number, numBytes: number): HashJob => ({ byteOffset: index * 1000, numBytes, tokenStart: index });

describe("splitJobs: a batch's pages shared among the hashing threads", () => {
    it("keeps every job once, in order, in at most the asked number of non-empty contiguous shares of about equal bytes", () => {
        for (const numJobs of [0, 1, 2, 3, 7, 32, 33]) {
            for (const numShares of [1, 2, 3, 4]) {
                const jobs = Array.from({ length: numJobs }, (_, index) => job(index, index === numJobs - 1 ? 500 : 1000));
                const shares = splitJobs(jobs, numShares);
                expect(shares.flat()).toEqual(jobs);
                expect(shares.length).toBeLessThanOrEqual(numShares);
                expect(shares.every((share) => share.length > 0)).toBe(true);
                if (numJobs >= numShares) {
                    expect(shares).toHaveLength(numShares);
                    const bytes = shares.map((share) => share.reduce((sum, each) => sum + each.numBytes, 0));
                    expect(Math.max(...bytes) - Math.min(...bytes)).toBeLessThanOrEqual(2 * 1000); // within two pages
                }
            }
        }
    });

    it("refuses a split into no share", () => {
        expect(() => splitJobs([job(0, 1)], 0)).toThrow(/split 0 ways/);
    });
});

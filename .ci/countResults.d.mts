export interface VitestJsonResults {
    readonly numPassedTests: number;
    readonly numFailedTests: number;
    readonly testResults?: ReadonlyArray<{
        readonly status: string;
        readonly assertionResults?: ReadonlyArray<{ readonly status: string }>;
    }>;
}

export function countResults(results: VitestJsonResults): { passed: number; failed: number };

// Pure: the project's GitHub page, from the app-update.yml electron-builder writes into the
// installed app's resources (from electron-builder.config.ts's `publish` and the origin remote):
// where Help › Kvault on GitHub goes and where macOS gets its updates by hand.
// The file is YAML of plain `key: value` lines: provider: github, owner: …, repo: …

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** `https://github.com/OWNER/REPO`, or undefined when the file does not name a GitHub repository. */
export function projectPageFromAppUpdate(appUpdateYml: string): string | undefined {
    const fields = new Map<string, string>();
    for (const line of appUpdateYml.split(/\r?\n/)) {
        const match = /^([A-Za-z]+):\s*(.*?)\s*$/.exec(line);
        if (match !== null) {
            fields.set(match[1]!, match[2]!.replace(/^(['"])(.*)\1$/, "$2"));
        }
    }
    const [provider, owner, repo] = [fields.get("provider"), fields.get("owner"), fields.get("repo")];
    if (provider !== "github" || owner === undefined || repo === undefined || !NAME.test(owner) || !NAME.test(repo)) {
        return undefined;
    }
    return `https://github.com/${owner}/${repo}`;
}

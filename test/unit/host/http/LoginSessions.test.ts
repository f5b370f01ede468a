import { describe, expect, it } from "vitest";
import { LoginSessions, loginSessionLifetimes } from "../../../../host/http/LoginSessions.js";

const HOUR_MS = 60 * 60 * 1000;

/** Sessions on a clock the test moves, with the documented lifetimes. */
function sessionsOnClock(): { sessions: LoginSessions; clock: { now: number } } {
    const clock = { now: 1_000_000 };
    const sessions = new LoginSessions(8080, () => undefined, { now: () => clock.now });
    return { sessions, clock };
}

function logIn(sessions: LoginSessions): { cookie: string; rpcToken: string; id: string } {
    const session = sessions.redeem(sessions.token)!;
    return { cookie: `${sessions.cookieName}=${session.id}`, rpcToken: session.rpcToken, id: session.id };
}

// A login session ends when unused for its idle lifetime, after its absolute lifetime however busy,
// or on log out; its cookie and RPC token open nothing after that.
describe("LoginSessions", () => {
    it("names its cookie after the port and a random part, so no two servers (or one restarted) share a cookie", () => {
        const first = new LoginSessions(8080, () => undefined);
        const second = new LoginSessions(8080, () => undefined);
        expect(first.cookieName).toMatch(/^kvault_session_8080_[0-9a-f]{8}$/);
        expect(second.cookieName).not.toBe(first.cookieName);
    });

    it("takes the cookie only with its own session's RPC token", () => {
        const { sessions } = sessionsOnClock();
        const one = logIn(sessions);
        const two = logIn(sessions);
        expect(sessions.authorize(one.cookie, one.rpcToken)).toBe(one.id);
        expect(sessions.authorize(one.cookie, "")).toBeUndefined();
        expect(sessions.authorize(one.cookie, two.rpcToken)).toBeUndefined();
        expect(sessions.authorize(undefined, one.rpcToken)).toBeUndefined();
    });

    it("ends a session unused for 12 hours, but not while an RPC connection is open on it", () => {
        const { sessions, clock } = sessionsOnClock();
        expect(loginSessionLifetimes.idleMs).toBe(12 * HOUR_MS);
        const idle = logIn(sessions);
        const busy = logIn(sessions);
        let numClosed = 0;
        const release = sessions.hold(busy.id, () => numClosed++);

        clock.now += 12 * HOUR_MS - 1;
        expect(sessions.hasSession(idle.cookie)).toBe(true); // a page load counts as use
        clock.now += 12 * HOUR_MS;
        expect(sessions.authorize(idle.cookie, idle.rpcToken)).toBeUndefined();
        expect(sessions.hasSession(busy.cookie)).toBe(true);
        expect(numClosed).toBe(0);

        release(); // the tab closed: the idle clock starts now
        clock.now += 12 * HOUR_MS;
        sessions.sweep();
        expect(sessions.hasSession(busy.cookie)).toBe(false);
    });

    it("ends every session 7 days after its login, closing its open RPC connections", () => {
        const { sessions, clock } = sessionsOnClock();
        expect(loginSessionLifetimes.absoluteMs).toBe(7 * 24 * HOUR_MS);
        const session = logIn(sessions);
        let numClosed = 0;
        sessions.hold(session.id, () => numClosed++);
        for (let hour = 0; hour < 7 * 24 - 1; hour++) {
            clock.now += HOUR_MS;
            expect(sessions.authorize(session.cookie, session.rpcToken)).toBe(session.id);
        }
        clock.now += HOUR_MS;
        sessions.sweep();
        expect(numClosed).toBe(1);
        expect(sessions.authorize(session.cookie, session.rpcToken)).toBeUndefined();
    });

    it("logs out: the session's cookie and token are dead at once, its connections closed, and ending it again does nothing", () => {
        const { sessions } = sessionsOnClock();
        const session = logIn(sessions);
        const other = logIn(sessions);
        let numClosed = 0;
        sessions.hold(session.id, () => numClosed++);
        sessions.end(session.id);
        sessions.end(session.id);
        expect(numClosed).toBe(1);
        expect(sessions.hasSession(session.cookie)).toBe(false);
        expect(sessions.authorize(other.cookie, other.rpcToken)).toBe(other.id);
        expect(sessions.clearedCookie()).toBe(`${sessions.cookieName}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    });
});

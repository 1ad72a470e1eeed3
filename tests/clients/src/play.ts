// A third-party client written from openapi.yaml alone: types by openapi-typescript
// (build/schema.d.ts), requests by openapi-fetch. It plays a complete game against the server
// given as the first argument and prints a summary as JSON; any surprise throws (exit code 1).
//
// Anna and Dieter play; Dieter's first turn goes throw by throw, the client sends `stop` only
// when `turn.must_stop` says so, undoes a mistyped throw, and handles a 409 by its `code`.
import createClient from "openapi-fetch";

import type { components, paths } from "../build/schema.js";

type Game = components["schemas"]["Game"];
type WriteResult = components["schemas"]["WriteResult"];
type Problem = components["schemas"]["Error"];
type Api = ReturnType<typeof createClient<paths>>;

function check(condition: boolean, what: string, value?: unknown): asserts condition {
  if (!condition) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

/** The answer of a write, or the problem details when it was refused. */
function written(answer: { data?: WriteResult; error?: Problem; response: Response }): Game {
  check(answer.data !== undefined, `HTTP ${answer.response.status}`, answer.error);
  return answer.data.game;
}

class Table {
  constructor(
    readonly api: Api,
    readonly slug: string,
    public game: Game,
  ) {}

  static async open(baseUrl: string, name: string, players: string[]): Promise<Table> {
    const anonymous = createClient<paths>({ baseUrl });
    const created = await anonymous.POST("/api/v1/stammtische", { body: { name } });
    check(created.data !== undefined, "create the Stammtisch", created.error);
    const { slug, token } = created.data;
    const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
    for (const player of players) {
      const added = await api.POST("/api/v1/stammtische/{slug}/players", {
        params: { path: { slug } },
        body: { name: player },
      });
      check(added.response.status === 201, "add a player", added.error);
    }
    const [starter] = players;
    check(starter !== undefined, "a player to start");
    const started = await api.POST("/api/v1/stammtische/{slug}/games", {
      params: { path: { slug } },
      body: { players, starter },
    });
    check(started.data !== undefined, "start the game", started.error);
    return new Table(api, slug, started.data);
  }

  get path() {
    return { path: { slug: this.slug, game_id: this.game.id } };
  }

  turnRequest(player: string, dice: number[], throws: number, hand = throws === 1) {
    const path = "/api/v1/stammtische/{slug}/games/{game_id}/turns";
    return this.api.POST(path, { params: this.path, body: { player, dice, throws, hand } });
  }

  async turn(player: string, dice: number[], throws: number, hand = throws === 1) {
    this.game = written(await this.turnRequest(player, dice, throws, hand));
    return this.game;
  }

  async throw(body: components["schemas"]["ThrowRequest"]) {
    const path = "/api/v1/stammtische/{slug}/games/{game_id}/throws";
    this.game = written(await this.api.POST(path, { params: this.path, body }));
    return this.game;
  }

  /** The player is done: stop only when the turn state says a stop is needed. */
  async done(player: string) {
    const turn = this.game.turn;
    if (turn?.open && turn.must_stop) return this.throw({ player, stop: true });
    return this.game;
  }

  async undo(by: string) {
    const path = "/api/v1/stammtische/{slug}/games/{game_id}/undo";
    const answer = await this.api.POST(path, { params: this.path, body: { by, reason: "vertippt" } });
    this.game = written(answer);
    return answer.data?.events ?? [];
  }
}

/** A refused write: its status and, from the typed problem details, its code. */
async function refused(answer: Promise<{ error?: Problem; response: Response }>) {
  const { error, response } = await answer;
  check(error !== undefined, "a refusal", response.status);
  return { status: response.status, code: error.code, detail: error.detail };
}

async function play(baseUrl: string) {
  const table = await Table.open(baseUrl, "Zum Anker TS", ["Anna", "Dieter"]);
  let turn = table.game.turn;
  check(turn?.player === "Anna" && turn.limit === 3 && !turn.limit_fixed, "opening", turn);
  let game = await table.turn("Anna", [2, 3, 5], 3); // the limit is now 3
  check(game.turn?.player === "Dieter" && game.turn.limit_fixed, "limit fixed", game.turn);

  // the wrong player's turn: 409 with the code turn_not_yours
  const notYours = await refused(table.turnRequest("Anna", [1, 1, 1], 1));
  check(notYours.status === 409 && notYours.code === "turn_not_yours", "409", notYours);

  // Dieter throw by throw: 6-3-1 with the one set aside; ended now, it would beat Anna's
  game = await table.throw({ player: "Dieter", dice: [6, 3, 1], aside: [1] });
  const opened = game.turn?.open;
  check(opened?.throws_left === 2 && opened.dice_in_cup === 2, "open turn", opened);
  check(opened.next_player === "Anna" && game.turn?.must_stop === false, "no stop", game.turn);
  game = await table.throw({ player: "Dieter", dice: [6, 6] }); // mistyped: undone
  check(game.turn?.open?.throws_used === 2, "a second throw", game.turn);
  const undone = await table.undo("Dieter");
  check(undone[0]?.kind === "undone", "undone", undone);
  check(table.game.turn?.open?.throws_used === 1, "one throw left after undo", table.game.turn);
  game = await table.throw({ player: "Dieter", dice: [2, 2] }); // 2-2-1 loses: Dieter opens next
  const mustStop = game.turn?.must_stop === true;
  check(mustStop && game.turn?.open?.next_player === "Dieter", "must stop", game.turn);
  game = await table.done("Dieter");
  check(game.turn?.open === null && game.outcome.state.stacks["Dieter"] === 1, "stop", game);

  // Anna's Schock aus ends each half: Dieter loses both (Blattschuss)
  for (const half of [1, 2]) {
    turn = table.game.turn;
    check(turn?.half === half && turn.player === "Dieter", `half ${half}`, turn);
    await table.turn("Dieter", [2, 3, 5], 1);
    game = await table.turn("Anna", [1, 1, 1], 1);
  }
  check(game.status === "finished" && game.turn === null, "finished", game.status);
  const over = await refused(table.turnRequest("Anna", [1, 1, 1], 1));
  check(over.status === 409 && over.code === "game_finished", "game over", over);
  return {
    status: game.status,
    loser: game.outcome.loser,
    half_losers: game.outcome.half_losers,
    blattschuss: game.outcome.blattschuss,
    refused: [notYours, over],
    undone: undone[0]?.message,
    must_stop: mustStop,
  };
}

const baseUrl = process.argv[2];
check(baseUrl !== undefined, "usage: node play.js BASE_URL");
console.log(JSON.stringify(await play(baseUrl)));

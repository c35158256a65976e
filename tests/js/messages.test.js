// The page's words (ui/static/messages/en.json, read through i18n.js): every key a module asks for is in the
// catalogue and every message is asked for; each call fills its message's placeholders, and only those, and is
// i18n.js's own function (not a local `t` that hides it); then t, plural, parts, number, fixed, percent and list.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { STATIC, load } from "./load.js";

const AL = await load("i18n.js", "store.js", "locale.js");
const catalogue = (locale) => JSON.parse(fs.readFileSync(path.join(STATIC, "messages", `${locale}.json`), "utf8"));
const en = catalogue("en");
const OTHERS = fs.readdirSync(path.join(STATIC, "messages")).map((n) => n.replace(/\.json$/, "")).filter((l) => l !== "en");
const FILES = fs.readdirSync(STATIC).filter((name) => name.endsWith(".js")).sort();
const SOURCES = Object.fromEntries(FILES.map((name) => [name, fs.readFileSync(path.join(STATIC, name), "utf8")]));
const FORMS = ["zero", "one", "two", "few", "many", "other"]; // Intl.PluralRules' categories
const LOOKUPS = ["t", "plural", "parts"]; // i18n.js's functions that take a key

/** A module without its comments (a `//` that follows no space, as in a URL, is code): tests/test_page_contract.py's. */
const code = (source) => source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
/** The messages a lookup reads: its key, or the plural forms of it. */
const read = (lookup, key) => (lookup !== "plural" ? [key]
  : Object.keys(en).filter((k) => k.startsWith(key + ".") && FORMS.includes(k.slice(key.length + 1))));

// Every lookup in the modules, [module, function, key], found with a regex; no key is built when the page runs.
const BEFORE = /(?<=^|[^\w$.]|\.\.\.)/.source; // a call, not a method (a spread's "..." may come before it)
const CALL = new RegExp(BEFORE + /(t|plural|parts)\(\s*"([^"]*)"/.source, "g");
const calls = FILES.flatMap((file) => [...code(SOURCES[file]).matchAll(CALL)].map((m) => [file, m[1], m[2]]));

test("every key a module asks for is in messages/en.json (a plural: its one and other forms)", () => {
  assert.ok(calls.length > 0, "no lookup found: is the regex still right?");
  const missing = calls.filter(([, lookup, key]) => (lookup === "plural"
    ? !(`${key}.one` in en && `${key}.other` in en) : !(key in en))).map(([file, lookup, key]) => `${file}: ${lookup}("${key}")`);
  assert.deepEqual(missing, []);
});

test("every message in messages/en.json is asked for by a module (app.*: by the app's Python, tests/test_messages.py)", () => {
  const used = new Set(calls.flatMap(([, lookup, key]) => read(lookup, key)));
  assert.deepEqual(Object.keys(en).filter((key) => !used.has(key) && !key.startsWith("app.")), []);
});

/** The keys locale `locale` must have: every key of English, a plural by the forms `locale` uses. */
function expected(locale) {
  const forms = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
  return Object.keys(en).filter((key) => {
    const form = key.slice(key.lastIndexOf(".") + 1), base = key.slice(0, key.lastIndexOf("."));
    return !(FORMS.includes(form) && `${base}.other` in en) || forms.includes(/** @type {any} */ (form));
  });
}
const tags = (text) => [...text.matchAll(/<\/?([a-z]+)/g)].map((m) => m[0]).sort();

test("every locale has every message (a plural: the forms its language uses), no other, placeholders and tags alike", () => {
  assert.ok(OTHERS.includes("zh-CN"), "the Chinese catalogue");
  for (const locale of OTHERS) {
    const own = catalogue(locale), want = expected(locale);
    assert.deepEqual(want.filter((key) => !(key in own)), [], `${locale} lacks these`);
    assert.deepEqual(Object.keys(own).filter((key) => !want.includes(key)), [], `${locale} has these, English or its plural rules do not`);
    for (const [key, text] of Object.entries(own)) {
      const source = en[key] ?? en[key.replace(/\.\w+$/, ".other")];
      assert.ok(typeof text === "string" && text.trim() !== "", `${locale} ${key} has no text`);
      assert.deepEqual([...new Set(placeholders(text))].sort(), [...new Set(placeholders(source))].sort(), `${locale} ${key}: placeholders`);
      assert.deepEqual(tags(text), tags(source), `${locale} ${key}: tags`);
    }
  }
});

test("the Chinese catalogue is Chinese: each message with English words has Chinese characters (names and symbols aside)", () => {
  const zh = catalogue("zh-CN");
  const english = Object.keys(zh).filter((key) => /[a-z]{4,}/.test((en[key] ?? en[key.replace(/\.\w+$/, ".other")])
    .replace(/\{\w+\}|<[^>]+>|&\w+;/g, "")) && !/[\u4e00-\u9fff]/.test(zh[key]));
  const names = ["spine.softmax", "glossary.softmax.term", "glossary.logit_lens.term"]; // kept in Latin letters
  assert.deepEqual(english.filter((key) => !names.includes(key) && !key.endsWith(".match")), []);
});

test("the locale: ?lang= first, then the kept choice, then the browser's languages, else English; any Chinese reads zh-CN", () => {
  assert.equal(AL.pickLocale("?lang=zh-CN", "en", ["en-US"]), "zh-CN");
  assert.equal(AL.pickLocale("?lang=en", "zh-CN", ["zh-CN"]), "en");
  assert.equal(AL.pickLocale("?lang=fr", "zh-CN", ["en"]), "zh-CN", "an unknown ?lang= falls through");
  assert.equal(AL.pickLocale("", null, ["de-DE", "zh-TW", "en"]), "zh-CN", "the first language the page speaks");
  assert.equal(AL.pickLocale("", null, ["de-DE", "fr"]), "en");
  assert.equal(AL.pickLocale("", null, []), "en");
  for (const tag of ["zh", "zh-CN", "zh-Hans", "zh-Hans-CN", "ZH-cn", "zh-HK"]) assert.equal(AL.localeOf(tag), "zh-CN", tag);
  for (const tag of ["en", "en-GB", "EN-us"]) assert.equal(AL.localeOf(tag), "en", tag);
  for (const tag of ["de", "zhx", "", null]) assert.equal(AL.localeOf(tag), null, String(tag));
});

test("in Chinese: the message of a key, one plural form, numbers and lists as Chinese writes them", () => {
  AL.set({ locale: "zh-CN" });
  try {
    assert.equal(AL.locale(), "zh-CN");
    assert.equal(AL.t("core.head", { n: 2 }), catalogue("zh-CN")["core.head"].replace("{n}", "2"));
    assert.equal(AL.plural("result.sentences", 1), AL.plural("result.sentences", 2).replace("2", "1"));
    assert.equal(AL.list(["a", "b"]), "a、b");
    assert.equal(AL.appText("app.translate.button"), "翻译");
    assert.throws(() => AL.appText("core.head", { n: 1 }), /not a message of the app's Python/);
  } finally {
    AL.set({ locale: "en" });
  }
});

test("each lookup names its key as written text, a key of its own module (<module>.<what>)", () => {
  const unwritten = new RegExp(BEFORE + /(?<!function )(t|plural|parts)\((?!\s*")/.source, "g");
  const built = FILES.flatMap((file) => [...code(SOURCES[file]).matchAll(unwritten)].map((m) => `${file}: ${m[0]}...`));
  assert.deepEqual(built, [], "a key built when the page runs cannot be checked here: write each key out");
  const strangers = calls.filter(([file, , key]) => !key.startsWith(file.replace(/\.js$/, "") + "."));
  assert.deepEqual(strangers, []);
});

test("the catalogue: dotted keys, no empty text, well-formed placeholders, both plural forms", () => {
  for (const [key, text] of Object.entries(en)) {
    assert.match(key, /^[a-z0-9_]+(\.[a-z0-9_]+)+$/, key);
    assert.ok(typeof text === "string" && text.trim() !== "", `${key} has no text`);
    assert.doesNotMatch(text.replace(/\{\w+\}/g, ""), /[{}]/, `${key}: a brace that is no {placeholder}`);
  }
  for (const key of Object.keys(en).filter((k) => k.endsWith(".one"))) assert.ok(key.replace(/one$/, "other") in en, key);
});

// The same lookups read by TypeScript's parser and checker: which function each call calls, and what it passes.
const program = ts.createProgram(FILES.map((name) => path.join(STATIC, name)), { allowJs: true, noEmit: true, noLib: true,
  types: [], target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  resolveJsonModule: true });
const checker = program.getTypeChecker();

/** The names an object literal gives (null: a spread, whose names cannot be read here). */
function namesOf(object) {
  const names = [];
  for (const property of object.properties) {
    if (ts.isSpreadAssignment(property)) return null;
    names.push(property.name.text);
  }
  return names;
}

/** Each call of t, plural or parts in `file`: [where, the function it calls, its key node, the values node]. */
function lookupsIn(file) {
  const source = program.getSourceFile(path.join(STATIC, file)), found = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && LOOKUPS.includes(node.expression.text)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      const symbol = checker.getSymbolAtLocation(node.expression);
      const declared = symbol && symbol.declarations && symbol.declarations[0];
      found.push({ where: `${file}:${line + 1}`, lookup: node.expression.text, declared, args: node.arguments });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test("each lookup calls i18n.js's own function and fills its message's placeholders, and only those", () => {
  const problems = [];
  let checked = 0;
  for (const file of FILES) {
    for (const { where, lookup, declared, args } of lookupsIn(file)) {
      const own = declared && (file === "i18n.js" ? ts.isFunctionDeclaration(declared)
        : ts.isImportSpecifier(declared) && declared.parent.parent.parent.moduleSpecifier.text === "./i18n.js");
      if (!own) { problems.push(`${where}: this ${lookup}() is not i18n.js's (a local name hides it)`); continue; }
      if (!args.length || !ts.isStringLiteral(args[0])) continue; // i18n.js's own definitions and plumbing
      const key = args[0].text, values = args[lookup === "plural" ? 2 : 1];
      const needed = new Set(read(lookup, key).flatMap((k) => placeholders(en[k] || "")));
      if (lookup === "plural") needed.delete("n"); // the count itself
      let object = values;
      if (values && ts.isIdentifier(values)) { // a const holding an object literal
        const declaration = checker.getSymbolAtLocation(values)?.valueDeclaration;
        object = declaration && ts.isVariableDeclaration(declaration) ? declaration.initializer : undefined;
      }
      if (values && !(object && ts.isObjectLiteralExpression(object))) {
        problems.push(`${where}: ${lookup}("${key}", ...) passes values that are not an object literal`);
        continue;
      }
      const given = object ? namesOf(object) : [];
      if (given === null) { problems.push(`${where}: ${lookup}("${key}", {...}) spreads its values: name each`); continue; }
      const missing = [...needed].filter((name) => !given.includes(name)), extra = given.filter((name) => !needed.has(name));
      if (missing.length) problems.push(`${where}: ${lookup}("${key}") leaves {${missing.join("}, {")}} unfilled`);
      if (extra.length) problems.push(`${where}: ${lookup}("${key}") passes ${extra.join(", ")}, which its message does not use`);
      checked += 1;
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(checked, calls.length, "the parser and the regex find the same lookups");
});

test("t: the text of a key, its placeholders filled; an unknown key or a missing value throws, naming it", () => {
  assert.equal(AL.t("viewer.overview"), "Every layer and head (click one)");
  assert.equal(AL.t("core.head", { n: 2 }), "head 2");
  assert.match(AL.t("core.read.common", { layers: 3, heads: 4 }), / 4 heads per layer: 4 attention patterns /,
    "a placeholder used twice");
  assert.throws(() => AL.t("viewer.no_such_message"), /no message "viewer\.no_such_message"/);
  assert.throws(() => AL.t("core.head"), /"core\.head" needs a value for \{n\}/);
  assert.equal(AL.t("core.head", { n: "{n}" }), "head {n}", "a value is not read for placeholders");
});

test("plural picks the form of the count (Intl.PluralRules) and writes the count in the locale", () => {
  assert.equal(AL.plural("result.sentences", 1), "1 sentence");
  assert.equal(AL.plural("result.sentences", 2), "2 sentences");
  assert.equal(AL.plural("result.sentences", 0), "0 sentences");
  assert.equal(AL.plural("result.sentences", 1234), "1,234 sentences");
  assert.equal(AL.plural("result.route_sentences", 2, { sentences: "1, 2", line: "translated by the default model." }),
    "Sentences 1, 2: translated by the default model.");
  assert.throws(() => AL.plural("result.nothing_counted", 2), /no message "result\.nothing_counted\.other"/);
});

test("a locale without its catalogue reads English, and numbers as English writes them", () => {
  AL.set({ locale: "xx-XX" });
  try {
    assert.equal(AL.locale(), "en");
    assert.equal(AL.t("viewer.more"), en["viewer.more"]);
    assert.equal(AL.number(1234.5), "1,234.5");
  } finally {
    AL.set({ locale: "en" });
  }
});

test("parts: the text around a placeholder, the element given for it in its place", () => {
  const bold = { nodeType: 1, textContent: "Ein Hund." };
  assert.deepEqual(AL.parts("viewer.sentence_option", { n: 1, text: bold }), ["1: ", bold]);
  assert.deepEqual(AL.parts("viewer.showing", { kind: bold, layer: 2, head: "head 1" }), [bold, " \u00b7 layer 2 \u00b7 head 1"],
    "one text between nodes");
  assert.throws(() => AL.parts("viewer.sentence_option", { n: 1 }), /"viewer\.sentence_option" needs a value for \{text\}/);
});

/** A small seeded generator: the same numbers every run. */
function random(seed) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}

test("fixed writes what toFixed writes, for English (no grouping, no -0)", () => {
  const next = random(7);
  for (let i = 0; i < 20000; i++) {
    const v = (next() - 0.5) * 10 ** Math.floor(next() * 6 - 2), digits = Math.floor(next() * 4);
    assert.equal(AL.fixed(v, digits), v.toFixed(digits), `${v} to ${digits}`);
  }
  assert.equal(AL.fixed(-0, 2), "0.00");
  assert.equal(AL.fixed(0.125, 2), (0.125).toFixed(2));
  assert.equal(AL.fixed(12345.678, 1), "12345.7");
});

test("percent writes a whole percentage as Math.round did, through Intl; number and list as English writes them", () => {
  const next = random(11);
  for (let i = 0; i < 20000; i++) {
    const p = (next() - 0.3) * 3;
    assert.equal(AL.percent(p), (Math.round(100 * p) || 0) + "%", String(p));
  }
  assert.equal(AL.percent(0.256), "26%");
  assert.equal(AL.percent(-0.003), "0%", "never -0%");
  assert.equal(AL.percent(12.5), "1250%", "no grouping");
  assert.equal(AL.number(1234), "1,234");
  assert.equal(AL.number(0), "0");
  assert.equal(AL.list(["a", "b", "c"]), "a, b, c");
  assert.equal(AL.list(["a"]), "a");
});

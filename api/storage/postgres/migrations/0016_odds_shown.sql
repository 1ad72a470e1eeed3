-- 0016 (PostgreSQL): where a Stammtisch shows the odds of a throw ("Chancen", issue 27): 'off' (the
-- default: some tables call it cheating), 'form' (the throw-by-throw input of the form) or
-- 'form_and_tv' (the TV page as well). A display setting of the Stammtisch, not a house rule:
-- rulesets and game logs do not name it.
ALTER TABLE stammtische ADD COLUMN odds_shown text NOT NULL DEFAULT 'off'
    CHECK (odds_shown IN ('off', 'form', 'form_and_tv'));

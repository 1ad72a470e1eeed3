-- 0005 (PostgreSQL): nothing changes (the SQLite 0005 neither): recorded so that the versions
-- of every engine line up.
SELECT 1;

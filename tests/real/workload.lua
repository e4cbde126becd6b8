-- workload.lua [SCALE] - a deterministic Lua workload for the 'real' suite:
-- recursion, string patterns, sorting with a comparator, coroutines and
-- errors caught by pcall. Its output depends only on SCALE (default 1), so
-- a traced interpreter must print exactly what an untraced one prints.
-- SCALE may be fractional (0.1 is a tenth of the work).
local scale = tonumber(arg and arg[1]) or 1
local function size(base) return math.max(1, math.floor(base * scale)) end

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

-- A small deterministic generator (no math.random: its seed and algorithm
-- are not the point here).
local state = 12345
local function rand(m)
  state = (state * 1103515245 + 12345) % 2147483648
  return state % m
end

local function checksum(s)
  local h = 0
  for i = 1, #s, 7 do h = (h * 31 + s:byte(i)) % 1000000007 end
  return h
end

-- 1. recursion
print("fib", fib(16 + math.floor(4 * math.sqrt(scale))))

-- 2. gsub, gmatch, format, rep
local words = {}
for i = 1, size(2000) do words[i] = string.format("w%d_%x", rand(1000), i) end
local text = table.concat(words, " ")
local replaced, nrep = text:gsub("w(%d+)_(%x+)", function(a, b)
  return b .. ":" .. (tonumber(a) * 2)
end)
local count = 0
for _ in replaced:gmatch("%x+:%d+") do count = count + 1 end
print("gsub", nrep, count, checksum(replaced), #(("ab"):rep(size(1000))))

-- 3. sort with a comparator (table.sort's auxsort is recursive C)
local t = {}
for i = 1, size(20000) do t[i] = { key = rand(100000), id = i } end
table.sort(t, function(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.id < b.id
end)
local ok = true
for i = 2, #t do
  if t[i - 1].key > t[i].key then ok = false end
end
print("sort", #t, ok, t[1].key, t[#t].key)

-- 4. coroutines: a producer, a filter and a consumer
local function producer(limit)
  return coroutine.wrap(function()
    for i = 1, limit do coroutine.yield(i) end
  end)
end
local function filter(src)
  return coroutine.wrap(function()
    for v in src do
      if v % 3 ~= 0 then coroutine.yield(v * v) end
    end
  end)
end
local sum = 0
for v in filter(producer(size(20000))) do sum = (sum + v) % 1000000007 end
print("coroutines", sum)

-- 5. errors: error() with strings and tables, caught by pcall and xpcall
local function risky(i)
  if i % 4 == 0 then error("bad " .. i) end
  if i % 4 == 1 then error({ code = i }) end
  if i % 4 == 2 then return i end
  local x = nil
  return x.field   -- a runtime error raised by the VM
end
local caught, codes, msgs, fine = 0, 0, 0, 0
for i = 1, size(5000) do
  local ok2, e = pcall(risky, i)
  if ok2 then fine = fine + 1
  elseif type(e) == "table" then codes = codes + e.code
  else msgs = msgs + 1 end
  if not ok2 then caught = caught + 1 end
end
local xok, xmsg = xpcall(function() error("deep") end, function(m) return "handled: " .. m end)
print("errors", caught, codes, msgs, fine, xok, xmsg:match("handled: .*deep") ~= nil)

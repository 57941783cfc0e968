"""The word lists behind the embedded corpus (:mod:`dlhack.corpus.generate`), as compact tables.

Every English word maps to one Japanese form, so a model can learn the corpus exactly; what makes
it hard is the order (SVO -> SOV, postpositions, numerals floated after the object) and the
inflection (tense, negation, politeness in questions: :mod:`dlhack.corpus.inflection`). Tables
are compact text, parsed into a lexicon by :mod:`dlhack.corpus.phrases`:
entries are separated by ``;`` or newlines, fields by spaces, and ``_`` joins a multi-word field
("police_officer", "男_の_人").

Noun tags: F countable food, M mass food, D drink, L meal, R readable, W writable, G gift,
T portable thing, K machine, X openable, Q surface, B container, J picture, A animal,
a small animal, P person, Y family member, S school subject, Z language, O sport or game,
U musical instrument, V show, C room. Place tags: o outdoors, b building, c city or country,
w water, h home.
"""
# en[/plural]  ja  counter (- none; cup/glass for drinks)  tags  [article: the | 0 for none]
NOUNS = """
apple りんご つ FG; orange オレンジ つ FG; banana バナナ 本 F; peach/peaches 桃 つ F; pear 梨 つ F
lemon レモン つ F; melon メロン つ FG; tomato/tomatoes トマト つ F; potato/potatoes じゃがいも つ F
carrot にんじん 本 F; onion 玉ねぎ つ F; egg 卵 つ F; cake ケーキ つ FG; cookie クッキー 枚 FG
sandwich/sandwiches サンドイッチ つ F; hamburger ハンバーガー つ F; pizza ピザ 枚 F
rice_ball おにぎり つ F; donut ドーナツ つ F; sausage ソーセージ 本 F
strawberry/strawberries いちご つ F; bread パン - M; rice ご飯 - M; soup スープ - M; meat 肉 - M
fish/fish 魚 匹 MAa; cheese チーズ - M; salad サラダ - M; curry カレー - M; sushi 寿司 - M
chocolate チョコレート - MG; ramen ラーメン - M; pasta パスタ - M; ice_cream アイスクリーム - M
coffee コーヒー cup D; tea お茶 cup D; cocoa ココア cup D; milk 牛乳 glass D; water 水 glass D
juice ジュース glass D; beer ビール glass D; wine ワイン glass D; lemonade レモネード glass D
breakfast 朝ご飯 - L; lunch 昼ご飯 - L; dinner 晩ご飯 - L
book 本 冊 RGT; magazine 雑誌 冊 RGT; newspaper 新聞 部 R; novel 小説 冊 RW; comic 漫画 冊 RG
dictionary/dictionaries 辞書 冊 RGT; textbook 教科書 冊 RT; letter 手紙 通 RW; email メール 通 RW
poem 詩 編 RW; postcard はがき 枚 RW; story/stories 物語 - RW; report レポート - RW
pen ペン 本 TG; pencil 鉛筆 本 TG; umbrella 傘 本 TG; key 鍵 つ T; bag かばん つ TXBG
box/boxes 箱 つ TXB; basket かご つ B; wallet 財布 つ TG; watch/watches 腕時計 つ TGK
clock 時計 つ K; camera カメラ 台 TGK; computer パソコン 台 K; phone 携帯電話 台 TK
radio ラジオ 台 K the; hat 帽子 つ TG; shirt シャツ 枚 TG; ticket 切符 枚 TJ; photo 写真 枚 J
picture 絵 枚 J; map 地図 枚 J; ball ボール つ T; stone 石 つ T; doll 人形 つ TG; toy おもちゃ つ TG
ring 指輪 つ TG; flower 花 本 G; dish/dishes 皿 枚 T; cup カップ つ T; chair 椅子 脚 Q; desk 机 台 Q
table テーブル 台 Q; bed ベッド 台 Q; shelf/shelves 棚 つ Q; sofa ソファー 台 Q
drawer 引き出し つ B; refrigerator 冷蔵庫 台 XB; door ドア つ X; window 窓 つ X
knife/knives ナイフ 本 T; car 車 台 K; bike 自転車 台 K; truck トラック 台 K; bus/buses バス 台 -
taxi タクシー 台 -; train 電車 - - the; paper 紙 枚 -; tree 木 本 -; bridge 橋 - -; road 道 - -
street 通り - -; mountain 山 - -; river 川 - -; mount_fuji 富士山 - - 0; song 歌 曲 -
dog 犬 匹 A; cat 猫 匹 A; bird 鳥 羽 Aa; horse 馬 頭 A; cow 牛 頭 A; rabbit うさぎ 匹 Aa
mouse/mice ねずみ 匹 Aa; monkey 猿 匹 A; bear 熊 頭 A; elephant 象 頭 A; lion ライオン 頭 A
tiger 虎 頭 A; duck あひる 羽 Aa; frog かえる 匹 Aa; pig 豚 頭 A; sheep/sheep 羊 頭 A
fox/foxes きつね 匹 A; panda パンダ 頭 A; butterfly/butterflies 蝶 匹 Aa
teacher 先生 人 P; student 学生 人 P; doctor 医者 人 P; nurse 看護師 人 P
police_officer 警察官 人 P; driver 運転手 人 P; singer 歌手 人 P; writer 作家 人 P
painter 画家 人 P; cook コック 人 P; pilot パイロット 人 P; engineer エンジニア 人 P
tourist 観光客 人 P; friend 友達 人 P; boy 男_の_子 人 P; girl 女_の_子 人 P
man/men 男_の_人 人 P; woman/women 女_の_人 人 P; child/children 子供 人 P; baby/babies 赤ちゃん 人 P
mother 母 - Y; father 父 - Y; brother 兄 - Y; sister 姉 - Y; son 息子 - Y; daughter 娘 - Y
grandmother 祖母 - Y; grandfather 祖父 - Y; uncle おじ - Y; aunt おば - Y; wife 妻 - Y
husband 夫 - Y; cousin いとこ - Y
english 英語 - SZ; japanese 日本語 - SZ; chinese 中国語 - SZ; french フランス語 - SZ
german ドイツ語 - SZ; spanish スペイン語 - SZ; korean 韓国語 - SZ; math 数学 - S; history 歴史 - S
science 科学 - S; music 音楽 - S; art 美術 - S; physics 物理 - S; chemistry 化学 - S
biology 生物学 - S; economics 経済学 - S; geography 地理 - S
tennis テニス - O; soccer サッカー - O; baseball 野球 - O; golf ゴルフ - O; volleyball バレーボール - O
basketball バスケットボール - O; table_tennis 卓球 - O; chess チェス - O; cards トランプ - O
piano ピアノ - U the; guitar ギター - U the; violin バイオリン - U the; cello チェロ - U the
movie 映画 本 V; tv テレビ - V 0; news ニュース - V the; drama ドラマ - V; anime アニメ - V 0
game 試合 - V; baseball_game 野球_の_試合 - V; soccer_game サッカー_の_試合 - V
room 部屋 - C; kitchen 台所 - C; classroom 教室 - C; garden 庭 - C; house 家 - C; bathroom 浴室 - C
"""

# prep [article] place  ja  tags;  "at home", "in tokyo" have no article
PLACES = """
in the park 公園 o; at the station 駅 b; at school 学校 b; in the library 図書館 b
at the hospital 病院 b; at the restaurant レストラン b; at the hotel ホテル b; on the beach 浜辺 o
in the river 川 w; in the lake 湖 w; in the sea 海 w; in the pool プール w; on the mountain 山 o
in the garden 庭 o; in the kitchen 台所 h; at the office 会社 b; at the store 店 b
at the supermarket スーパー b; at the museum 博物館 b; at the zoo 動物園 o; at the airport 空港 b
at the bank 銀行 b; at the post_office 郵便局 b; at the university 大学 b; at the cafe 喫茶店 b
in the gym 体育館 b; at the market 市場 o; at the bakery パン屋 b; at the bookstore 本屋 b
in the classroom 教室 b; in the forest 森 o; at the church 教会 b; at the theater 劇場 b
at the stadium 競技場 b; in the village 村 o; at home 家 h; in my room 私_の_部屋 h
in tokyo 東京 c; in kyoto 京都 c; in osaka 大阪 c; in nara 奈良 c; in hokkaido 北海道 c
in london ロンドン c; in paris パリ c; in new_york ニューヨーク c; in america アメリカ c
in japan 日本 c; in china 中国 c; in france フランス c; in italy イタリア c; in canada カナダ c
in australia オーストラリア c; in hawaii ハワイ c
"""

# en  ja  (i | na)  targets: noun tags, @ for places, or English nouns
ADJECTIVES = """
big 大きい i FATK@; small 小さい i FATK@; new 新しい i TKRC@; old 古い i TKRC@; red 赤い i TK
blue 青い i TK; white 白い i TKA; black 黒い i TKA; yellow 黄色い i TK; heavy 重い i TK
light 軽い i TK; expensive 高い i TKDMF; cheap 安い i TKDMF; delicious おいしい i FMDL
sweet 甘い i F; spicy 辛い i M; cold 冷たい i D; hot 熱い i coffee_tea_cocoa
young 若い i PY; kind 親切 na PY; busy 忙しい i PY; famous 有名 na P@; strong 強い i PA
clever 賢い i PA; happy 幸せ na PY; cute かわいい i A_baby_child_girl_boy; fast 速い i AK
quiet 静か na @C; beautiful 美しい i @J; clean きれい na @C; large 広い i @C; dark 暗い i @C
bright 明るい i C; interesting 面白い i RVS; difficult 難しい i RS; easy 簡単 na RS
long 長い i RV; short 短い i RV; boring つまらない i RVS
"""

# en forms (base/past[/ing][+particle]) | ja (root-kana godan, root=kana ichidan, -する)
#   | objects (noun tags, N a person, @tags places, English nouns) | place tags | tools | flags
# flags: a animal subject, p progressive, n no request, N object takes に, t to-recipient,
#   f from-source, P needs a position (on/in/under)
TRANSITIVE = """
eat/ate | 食べ=る | F M L | obhc | e | ap; drink/drank | 飲-む | D | obhc | | ap
read/read | 読-む | R | obhc | | p; write/wrote | 書-く | W | bhc | w | p
buy/bought | 買-う | F G T D K R | bc | |; sell/sold | 売-る | T K R | bc | |
make/made | 作-る | cake cookie sandwich hamburger pizza rice_ball donut L | bh | | p
cook/cooked | 料理-する | M | bh | | p
wash/washed | 洗-う | car bike dish cup shirt hat | oh | | p; clean/cleaned | 掃除-する | C | | | p
open/opened | 開け=る | X | | |; close/closed | 閉め=る | X | | |; see/saw | 見=る | A N | obc | | n
watch/watched | 見=る | V | bh | | p; find/found | 見つけ=る | T A | obh | | n
lose/lost | なく-す | T | obc | | n; use/used | 使-う | T K | bh | | p
carry/carried | 運-ぶ | box bag chair desk table | ob | | p
throw/threw | 投げ=る | ball stone | o | | p; catch/caught | 捕まえ=る | a | ow | | a
draw/drew | 描-く | picture map A | obh | d | p
cut/cut/cutting | 切-る | cake pizza bread apple melon tomato onion carrot paper | h | c | p
take/took | 撮-る | photo | obc | p |; fix/fixed | 直-す | K | bh | | p
borrow/borrowed | 借り=る | R T K | b | | f; lend/lent | 貸-す | R T K | | | t
give/gave | あげ=る | G | | | t; send/sent | 送-る | letter email postcard photo | | | t
show/showed | 見せ=る | J book | | | t; meet/met | 会-う | N | obc | | N
call/called | 電話-する | N | bh | | Np; help/helped | 手伝-う | N | bh | | p
visit/visited | 訪ね=る | N @bc | | |; wait/waited+for | 待-つ | N bus taxi | ob | | p
study/studied | 勉強-する | S | bh | | p; learn/learned | 習-う | S U | bc | |
teach/taught | 教え=る | S | b | | p; speak/spoke | 話-す | Z | | |; play/played | -する | O | obh | | p
play/played | 弾-く | U | bh | | p; sing/sang | 歌-う | song | obh | | p
listen/listened+to | 聞-く | music radio song news | bh | | p
climb/climbed | 登-る | mountain tree mount_fuji | | | N
cross/crossed | 渡-る | river bridge road street | | |; order/ordered | 注文-する | F M D | b | |
forget/forgot/forgetting | 忘れ=る | T | bc | | n; put/put/putting | 置-く | T R F | | | P
drive/drove | 運転-する | car bus truck taxi | oc | | p
ride/rode | 乗-る | bike horse train bus | oc | | Np; look/looked+for | 探-す | T A | obh | | p
"""

# en forms | ja | place tags | flags
INTRANSITIVE = """
run/ran/running | 走-る | ob | ap; walk/walked | 歩-く | oc | ap; swim/swam/swimming | 泳-ぐ | w | ap
sleep/slept | 寝=る | hb | ap; laugh/laughed | 笑-う | obhc | p; cry/cried | 泣-く | obh | p
sing/sang | 歌-う | obh | p; dance/danced | 踊-る | obh | p; work/worked | 働-く | bc | p
play/played | 遊-ぶ | oh | ap; rest/rested | 休-む | obh | ap; study/studied | 勉強-する | bh | p
wait/waited | 待-つ | ob | p; shout/shouted | 叫-ぶ | ob |
"""

# en forms | ja | destination particle | flags (v: by vehicle)
MOTION = """
go/went | 行-く | に | v; come/came | 来-る | に | v; return/returned | 帰-る | に | v
walk/walked | 歩-く | まで |; run/ran/running | 走-る | まで |
"""

TOOLS = {  # instrument phrases per tool key of TRANSITIVE
    "e": "with_chopsticks 箸; with_a_spoon スプーン; with_a_fork フォーク",
    "w": "with_a_pen ペン; with_a_pencil 鉛筆; with_a_brush 筆",
    "d": "with_a_pen ペン; with_a_pencil 鉛筆; with_crayons クレヨン",
    "c": "with_a_knife ナイフ; with_scissors はさみ",
    "p": "with_a_camera カメラ; with_my_phone 私_の_携帯電話",
}
VEHICLES = "bus バス; train 電車; car 車; bike 自転車; taxi タクシー; subway 地下鉄; plane+ 飛行機; ship+ 船"
NAMES = """tom トム; mary メアリー; ken 健; emi エミ; john ジョン; lucy ルーシー; bob ボブ; jane ジェーン
taro 太郎; hanako 花子; mike マイク; kate ケイト; alice アリス; david デイビッド; lisa リサ
nancy ナンシー; paul ポール; sam サム; yuki ゆき; bill ビル"""
# subject object possessive  ja  person (1: i, 2: you, 3: he/she, p: plural)
PRONOUNS = """i me my 私 1; you you your あなた 2; he him his 彼 3; she her her 彼女 3
we us our 私_たち p; they them their 彼_ら p"""
NUMBERS = """one 一; two 二; three 三; four 四; five 五; six 六; seven 七; eight 八; nine 九; ten 十
eleven 十一; twelve 十二"""
DAYS = """monday 月曜日; tuesday 火曜日; wednesday 水曜日; thursday 木曜日; friday 金曜日
saturday 土曜日; sunday 日曜日"""
TIMES = {  # tense -> phrases; dlhack.corpus.phrases.time_phrase adds days and clock hours
    "past": "yesterday 昨日; last_night 昨夜; last_week 先週; last_month 先月; last_year 去年;"
            " this_morning 今朝",
    "fut": "tomorrow 明日; tonight 今夜; next_week 来週; next_month 来月; next_year 来年",
    "pres": "every_day 毎日; every_morning 毎朝; every_night 毎晩; every_week 毎週",
    "prog": "now 今",
}
ADVERBS = "always いつも; often よく; sometimes 時々; usually 普段"
POSITIONS = "on 上 Q; under 下 Q; in 中 B; near 近く H; in_front_of 前 H; behind 後ろ H; next_to 隣 H"


def entries(table):
    """Split a table into entries (``;`` or newline), each a list of fields (``_`` -> space)."""
    for item in table.replace("\n", ";").split(";"):
        if item.strip():
            yield [field.replace("_", " ") for field in item.split()]


def rows(table):
    """Split a table of ``|``-separated rows into lists of stripped fields."""
    items = table.replace("\n", ";").split(";")
    return [[f.strip() for f in item.split("|")] for item in items if item.strip()]

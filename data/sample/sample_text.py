"""The text of the shipped sample dump: page-specific leads and sections, the section
paragraphs shared by pages of one kind, and the infobox fields (data/sample/make_sample.py
turns them into wikitext). All text was written for the project; no Wikipedia text is copied."""
from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Page-specific text: (title, kind, facts, lead, (section title, section text))
# facts fill the {slots} of the shared section paragraphs below.

CITIES = [
    ("Szeged", dict(region="Csongrád-Csanád", river="Tisza", founded="1247", pop="160 766", area="280,84"),
     "'''Szeged''' [[Magyarország]] harmadik legnépesebb városa, Csongrád-Csanád vármegye székhelye, a Dél-Alföld gazdasági és kulturális központja. A [[Tisza]] és a Maros összefolyásánál fekszik, ezért a napsütéses órák magas száma miatt gyakran nevezik a „napfény városának” is.",
     ("A nagy árvíz", "Az 1879. március 12-én bekövetkezett árvíz szinte teljesen elpusztította a várost: a kb. 5700 házból alig háromszáz maradt épen. Az újjáépítés során alakult ki a mai körutas-sugárutas szerkezet, amelyet Lechner Lajos tervezett. A segítséget nyújtó európai városokról kapták nevüket a Nagykörút szakaszai, így lett Bécsi, Párizsi, Londoni, Brüsszeli és Római körút.")),
    ("Debrecen", dict(region="Hajdú-Bihar", river="Tócó-patak", founded="1235", pop="199 520", area="461,66"),
     "'''Debrecen''' Magyarország második legnépesebb városa, Hajdú-Bihar vármegye székhelye. A kálvinista hagyományai miatt „kálvinista Rómának” is nevezett város a reformáció egyik legfontosabb hazai központja volt, kollégiuma évszázadokon át a magyar oktatás bástyájának számított.",
     ("A Nagytemplom", "A város jelképe a klasszicista stílusú Református Nagytemplom, amely 1805 és 1824 között épült Péchy Mihály tervei alapján. Az épületben ülésezett 1849-ben az országgyűlés, amely kimondta a Habsburg-ház trónfosztását. A templom nyugati tornyában található a Rákóczi-harang, amelyet II. Rákóczi Ferenc ágyúiból öntöttek újra.")),
    ("Pécs", dict(region="Baranya", river="Pécsi-víz", founded="1009", pop="142 873", area="162,61"),
     "'''Pécs''' a Mecsek déli lejtőjén elterülő város, Baranya vármegye székhelye. Elődje a római kori Sopianae volt, amelynek ókeresztény sírkamrái ma az UNESCO világörökség részét képezik. 2010-ben Európa kulturális fővárosa címet viselte.",
     ("Egyetem és kultúra", "Nagy Lajos király 1367-ben itt alapította az ország első egyetemét, amely azonban rövid ideig működött. A mai Pécsi Tudományegyetem kb. húszezer hallgatója miatt a város valódi diákvárossá vált. A Zsolnay porcelánmanufaktúra eozinmázas kerámiái, a Zsolnay Kulturális Negyed és a Széchenyi tér dzsámija messze földön ismertek.")),
    ("Győr", dict(region="Győr-Moson-Sopron", river="Mosoni-Duna", founded="1271", pop="129 372", area="174,62"),
     "'''Győr''' a Mosoni-Duna, a Rába és a Rábca összefolyásánál fekvő város, Győr-Moson-Sopron vármegye székhelye. Gazdag barokk belvárosa és erős ipara miatt a Nyugat-Dunántúl egyik legfontosabb települése.",
     ("Ipar", "A város gazdaságát a 20. század elején a Rába gépgyár határozta meg, amely vasúti kocsikat, később teherautókat és futóműveket gyártott. Az 1990-es évek óta a járműipar vált meghatározóvá: a motorgyár több ezer embernek ad munkát, beszállítói pedig a környező falvakban is megtalálhatók.")),
    ("Miskolc", dict(region="Borsod-Abaúj-Zemplén", river="Sajó", founded="1365", pop="150 695", area="236,68"),
     "'''Miskolc''' Észak-Magyarország legnagyobb városa, Borsod-Abaúj-Zemplén vármegye székhelye. A Bükk hegység keleti lábánál fekszik; a 20. században a nehézipar, elsősorban a diósgyőri vasgyártás tette az ország egyik ipari központjává.",
     ("Diósgyőr és Lillafüred", "A város részét képező Diósgyőr négytornyú gótikus vára Nagy Lajos király kedvelt tartózkodási helye volt. A közeli Lillafüreden áll a Palotaszálló, a Hámori-tó partján pedig a Szinva-vízesés, amely az ország egyik legmagasabb vízesése. A Miskolctapolcai barlangfürdő természetes barlangjáratokban kialakított medencéi egész évben látogathatók.")),
    ("Eger", dict(region="Heves", river="Eger-patak", founded="1009", pop="52 898", area="92,2"),
     "'''Eger''' a Bükk és a Mátra között fekvő megyei jogú város, Heves vármegye székhelye. Várát 1552-ben Dobó István kapitány védte meg a török túlerővel szemben; ezt az ostromot Gárdonyi Géza ''Egri csillagok'' című regénye tette halhatatlanná.",
     ("Borvidék", "Az egri borvidék leghíresebb bora az egri bikavér, amely több szőlőfajta házasításával készül. A Szépasszony-völgy pincéiben ma is kóstolható a helyi bor. A legenda szerint a vár védői a bortól vörös szakállal harcoltak, ezért a törökök azt hitték, hogy bikavért isznak.")),
    ("Sopron", dict(region="Győr-Moson-Sopron", river="Ikva", founded="1277", pop="62 869", area="169,04"),
     "'''Sopron''' az osztrák határ mellett fekvő város, amelyet 1921-es népszavazása után a „leghűségesebb város” (''Civitas Fidelissima'') címmel tüntettek ki. Középkori belvárosa és Tűztornya az ország legjobb állapotban megmaradt műemlékei közé tartozik.",
     ("A népszavazás", "Az első világháborút lezáró békeszerződések Sopront és környékét Ausztriának ítélték. A helyi ellenállás és a nemzetközi tárgyalások nyomán 1921. dec. 14-én népszavazást tartottak, amelyen a szavazók kb. 65 százaléka Magyarország mellett döntött. Az eseményről minden évben december közepén emlékeznek meg.")),
    ("Kecskemét", dict(region="Bács-Kiskun", river="Csukás-ér", founded="1368", pop="109 651", area="322,55"),
     "'''Kecskemét''' a Duna–Tisza közén fekvő város, Bács-Kiskun vármegye székhelye. Szecessziós főtere, a Cifrapalota és a városháza Lechner Ödön és Pártos Gyula munkái; a várost a barackpálinka és Kodály Zoltán szülővárosaként is ismerik.",
     ("Szecesszió", "A 20. század elején a város vezetése tudatosan a magyaros szecesszió stílusát választotta a középületekhez. A városháza harangjátéka naponta többször Kodály- és Erkel-dallamokat játszik. A Cifrapalota színes Zsolnay-kerámiákkal díszített homlokzata ma a Kecskeméti Képtárnak ad otthont.")),
    ("Veszprém", dict(region="Veszprém", river="Séd", founded="1009", pop="56 210", area="126,93"),
     "'''Veszprém''' a Bakony és a Balaton-felvidék határán, öt dombra épült város, Veszprém vármegye székhelye. A hagyomány szerint Gizella királyné kedvelt városa volt, ezért a „királynék városa” néven is emlegetik.",
     ("Európa kulturális fővárosa", "Veszprém a Balaton-régióval együtt 2023-ban viselte az Európa kulturális fővárosa címet. A programsorozat kb. négyezer rendezvényt foglalt magában a könnyűzenétől a kortárs képzőművészetig. A vár Szent István-szobra és a Gizella-kápolna freskói a látogatók kedvelt célpontjai.")),
    ("Budapest", dict(region="Közép-Magyarország", river="Duna", founded="1873", pop="1 706 851", area="525,2"),
     "'''Budapest''' Magyarország fővárosa és legnépesebb települése, az ország politikai, gazdasági és kulturális központja. 1873. november 17-én jött létre Pest, Buda és Óbuda egyesítésével; a Duna két partján fekvő város számos része, köztük a budai Várnegyed és az Andrássy út, a világörökség része.",
     ("Közlekedés", "A budapesti földalatti vasút 1896-ban, a millenniumi ünnepségekre nyílt meg, így a kontinens legrégebbi működő metróvonala. Ma négy metróvonal, több tucat villamos- és autóbuszvonal, valamint a HÉV szolgálja a közlekedést. A Duna hídjai közül a Széchenyi lánchíd, az Erzsébet híd és a Szabadság híd a legismertebbek.")),
]

NATURE = [
    ("Duna", dict(kind_word="folyó", length="2850", source="Fekete-erdő", countries="tíz"),
     "'''Duna''' Európa második leghosszabb folyója, amely a németországi Fekete-erdőből ered és a Fekete-tengerbe ömlik. Tíz országon halad át, közülük négynek a fővárosát is érinti: Bécset, Pozsonyt, Budapestet és Belgrádot.",
     ("Hajózás", "A Duna évszázadok óta fontos vízi út. Az első gőzhajó 1830-ban indult el Pest és Bécs között, a Duna Gőzhajózási Társaság szervezésében. Ma a Rajna–Majna–Duna-csatorna révén az Északi-tengertől a Fekete-tengerig lehet hajózni, bár alacsony vízállásnál a teherhajók csak részleges rakománnyal közlekedhetnek.")),
    ("Tisza", dict(kind_word="folyó", length="962", source="Máramarosi-havasok", countries="öt"),
     "'''Tisza''' Közép-Európa egyik legnagyobb folyója, a Duna leghosszabb mellékfolyója. A Máramarosi-havasokban ered, Magyarországot északkeletről délre szeli át, és Szerbiában torkollik a Dunába.",
     ("Szabályozás", "A 19. század közepéig a Tisza ártere hatalmas, időszakosan elöntött terület volt. Gróf Széchenyi István kezdeményezésére 1846-ban kezdődött meg a folyó szabályozása Vásárhelyi Pál tervei alapján. A kanyarulatok átvágásával a folyó hossza kb. 450 kilométerrel rövidült meg, az ártér jelentős része pedig szántóföld lett.")),
    ("Balaton", dict(kind_word="tó", length="77", source="Zala", countries="egy"),
     "'''Balaton''' Közép-Európa legnagyobb tava, a magyarok „tengere”. Hossza kb. 77 kilométer, átlagos mélysége mindössze 3,2 méter, ezért nyáron gyorsan felmelegszik, és a fürdőzők egyik legkedveltebb célpontja.",
     ("Éghajlat és jég", "Télen a tó gyakran befagy; a hideg januárokon a jég vastagsága elérheti a 20–30 centimétert is. Ilyenkor korcsolyázók, jégvitorlások és halászok népesítik be. Tavasszal a jégtáblák a szél hatására a partra torlódhatnak, ezt a jelenséget a helyiek jégtolásnak nevezik.")),
    ("Hortobágy", dict(kind_word="puszta", length="80", source="Tisza", countries="egy"),
     "'''Hortobágy''' Magyarország legnagyobb összefüggő füves pusztája a Tiszántúlon. Az 1973-ban létrehozott Hortobágyi Nemzeti Park volt az ország első nemzeti parkja, 1999 óta pedig a világörökség része mint kultúrtáj.",
     ("Pásztorkultúra", "A pusztán évszázadok óta legeltetik a szürkemarhát, a rackajuhot és a mangalicát. A pásztorok – a gulyás, a csikós, a juhász és a kanász – saját viseletükről, eszközeikről és szokásaikról ismertek. A kilenclyukú híd mellett minden év augusztusában megrendezik a Hídi vásárt.")),
    ("Mátra", dict(kind_word="hegység", length="40", source="Zagyva", countries="egy"),
     "'''Mátra''' vulkanikus eredetű hegység az Északi-középhegységben. Itt található Magyarország legmagasabb pontja, az 1014 méter magas Kékes, amelynek csúcsán tévétorony és kilátó is áll.",
     ("Turizmus", "A hegység a főváros közelsége miatt kedvelt kirándulóhely. Mátrafüred, Mátraháza és Galyatető üdülői már a 20. század elején népszerűek voltak. Télen a Kékes északi lejtőjén sípályák működnek, nyáron pedig a kék túra egyik leglátványosabb szakasza vezet át a gerincen.")),
    ("Bükk", dict(kind_word="hegység", length="50", source="Szinva", countries="egy"),
     "'''Bükk''' az Északi-középhegység legnagyobb területű tagja, Eger és Miskolc között. Fennsíkját mészkő építi fel, ezért felszínén töbrök, víznyelők, alatta pedig több száz barlang található.",
     ("Barlangok", "A Szeleta-barlangban talált kőeszközök alapján nevezték el a szeletai kultúrát, amely kb. negyvenezer évvel ezelőtt virágzott. Az István-barlang cseppkövei és a Lillafüredi Anna-barlang mésztufa képződményei látogathatók. A Bükki Nemzeti Park 1977-ben alakult meg.")),
]

PERSONS = [
    ("Petőfi Sándor", dict(job="költő", born="1823", died="1849", place="Kiskőrös", work="''János vitéz''"),
     "'''Petőfi Sándor''' (született Petrovics Sándor; Kiskőrös, 1823. január 1. – Fehéregyháza, 1849. július 31.) magyar költő, forradalmár, a magyar líra egyik legismertebb alakja. Verseit szinte minden nyelvre lefordították.",
     ("1848. március 15.", "A pesti forradalom napján a Pilvax kávéházból induló fiatalok élén Petőfi szavalta el a ''Nemzeti dal'' című versét. A tömeg a Landerer-nyomdában cenzúra nélkül kinyomtatta a tizenkét pontot és a verset, ami a sajtószabadság első napjának jelképe lett. A költő később Bem József seregében harcolt, és a segesvári csatában tűnt el.")),
    ("Arany János", dict(job="költő", born="1817", died="1882", place="Nagyszalonta", work="''Toldi''"),
     "'''Arany János''' (Nagyszalonta, 1817. március 2. – Budapest, 1882. október 22.) magyar költő, műfordító, a Kisfaludy Társaság igazgatója és a Magyar Tudományos Akadémia főtitkára. A magyar irodalom legnagyobb epikusaként tartják számon.",
     ("Balladák", "Arany balladái – például a ''Szondi két apródja'', a ''Walesi bárdok'' és az ''Ágnes asszony'' – tömör szerkesztésükkel és drámai erejükkel tűnnek ki. A ''Walesi bárdok'' 1857-ben született, amikor Ferenc József magyarországi látogatására üdvözlő verset vártak tőle. Ehelyett egy zsarnokról szóló ballada lett belőle, amely csak évekkel később jelenhetett meg.")),
    ("Liszt Ferenc", dict(job="zeneszerző", born="1811", died="1886", place="Doborján", work="a ''Magyar rapszódiák''"),
     "'''Liszt Ferenc''' (Doborján, 1811. október 22. – Bayreuth, 1886. július 31.) magyar zeneszerző, zongoraművész, karmester és zenepedagógus, a 19. század egyik legnagyobb hatású zenésze. Koncertjein olyan lelkesedést váltott ki, amelyet a kortársak „Lisztomániának” neveztek.",
     ("Zeneakadémia", "Liszt kezdeményezésére 1875-ben nyílt meg Budapesten az Országos Magyar Királyi Zeneakadémia, amelynek első elnöke lett. Az intézmény mai épülete az Erzsébetváros Liszt Ferenc terén áll, és nevét is ő viseli. Tanítványai között ott volt többek között Thomán István, aki később Bartók Béla és Dohnányi Ernő tanára lett.")),
    ("Bartók Béla", dict(job="zeneszerző", born="1881", died="1945", place="Nagyszentmiklós", work="''A kékszakállú herceg vára''"),
     "'''Bartók Béla''' (Nagyszentmiklós, 1881. március 25. – New York, 1945. szeptember 26.) magyar zeneszerző, zongoraművész és népzenekutató, a 20. századi zene egyik legjelentősebb alakja.",
     ("Népzenegyűjtés", "Bartók 1906-tól Kodály Zoltánnal együtt járta a falvakat, és fonográffal rögzítette a parasztok dalait. Gyűjtőútjai során kb. tízezer dallamot jegyzett le magyar, szlovák, román, rutén és arab területekről. A népzene ritmikája és hangsorai új alapot adtak saját zeneszerzői stílusának is.")),
    ("Semmelweis Ignác", dict(job="orvos", born="1818", died="1865", place="Tabán", work="a gyermekágyi láz okáról szóló könyve"),
     "'''Semmelweis Ignác''' (Tabán, 1818. július 1. – Döbling, 1865. augusztus 13.) magyar orvos, az „anyák megmentője”. Felismerte, hogy a gyermekágyi lázat az orvosok kezén átvitt fertőzés okozza, és bevezette a klórmeszes kézmosást.",
     ("A felfedezés", "A bécsi közkórház szülészetén Dr. Semmelweis észrevette, hogy az orvostanhallgatók által ellátott osztályon jóval magasabb a halálozás, mint a bábák osztályán. Miután 1847-ben kötelezővé tette a kézmosást, a halálozási arány kb. tizedére csökkent. Kortársai nagy része mégis elutasította elméletét, igazát csak halála után ismerték el.")),
    ("Szent-Györgyi Albert", dict(job="biokémikus", born="1893", died="1986", place="Budapest", work="a C-vitamin izolálása"),
     "'''Szent-Györgyi Albert''' (Budapest, 1893. szeptember 16. – Woods Hole, 1986. október 22.) Nobel-díjas magyar biokémikus. 1937-ben a biológiai égésfolyamatok, különösen a C-vitamin és a fumársav katalízise terén tett felfedezéseiért kapta meg az élettani és orvostudományi Nobel-díjat.",
     ("Szegedi paprika", "Szent-Györgyi a Szegedi Tudományegyetemen dolgozott, amikor rájött, hogy a szegedi paprika rendkívül gazdag C-vitaminban. A hagyomány szerint felesége egy este paprikát tett az asztalra, ő pedig a laboratóriumba vitte. Néhány hét alatt több kilogramm tiszta aszkorbinsavat állított elő, ami lehetővé tette a vegyület alapos vizsgálatát.")),
    ("Jókai Mór", dict(job="író", born="1825", died="1904", place="Komárom", work="''Az arany ember''"),
     "'''Jókai Mór''' (Komárom, 1825. február 18. – Budapest, 1904. május 5.) magyar regényíró, a „nagy magyar mesemondó”, országgyűlési képviselő és a Magyar Tudományos Akadémia tagja. Több mint száz kötetet írt.",
     ("Regényei", "Jókai legismertebb művei közé tartozik ''Az arany ember'', ''A kőszívű ember fiai'', az ''Egy magyar nábob'' és a ''Fekete gyémántok''. Regényeiben a romantikus cselekmény gyakran keveredik a korabeli tudomány eredményeivel. Balatonfüredi villájában ma emlékmúzeum működik, a kertben pedig ma is áll az általa ültetett fa.")),
    ("Kodály Zoltán", dict(job="zeneszerző", born="1882", died="1967", place="Kecskemét", work="a ''Psalmus Hungaricus''"),
     "'''Kodály Zoltán''' (Kecskemét, 1882. december 16. – Budapest, 1967. március 6.) magyar zeneszerző, népzenekutató és zenepedagógus. Nevét világszerte a róla elnevezett zenepedagógiai módszer tette ismertté.",
     ("A Kodály-módszer", "Kodály szerint a zene mindenkié, ezért az éneklést már az óvodában el kell kezdeni. Módszere a relatív szolmizációra, a kézjelekre és a népdalok anyanyelvként való tanítására épül. A módszert ma is sok országban alkalmazzák, az UNESCO pedig 2016-ban a szellemi kulturális örökség jó gyakorlatai közé vette fel.")),
    ("Széchenyi István", dict(job="politikus", born="1791", died="1860", place="Bécs", work="a ''Hitel''"),
     "'''Széchenyi István''' (Bécs, 1791. szeptember 21. – Döbling, 1860. április 8.) magyar politikus, író, a reformkor egyik vezéralakja, akit Kossuth Lajos „a legnagyobb magyarnak” nevezett.",
     ("Alapításai", "Széchenyi 1825-ben egyéves jövedelmét ajánlotta fel a Magyar Tudományos Akadémia megalapítására. Nevéhez fűződik a Lánchíd építésének kezdeményezése, a dunai gőzhajózás fejlesztése, a Nemzeti Kaszinó és a lóversenyzés meghonosítása. 1830-ban megjelent ''Hitel'' című művében a hitelrendszer és a jobbágyrendszer reformját sürgette.")),
    ("Neumann János", dict(job="matematikus", born="1903", died="1957", place="Budapest", work="a játékelmélet megalapozása"),
     "'''Neumann János''' (Budapest, 1903. december 28. – Washington, 1957. február 8.) magyar származású amerikai matematikus, a modern számítógép-architektúra egyik megalkotója, a játékelmélet és a kvantummechanika matematikai alapjainak kidolgozója.",
     ("A Neumann-elv", "Az 1945-ben írt jelentésében Neumann leírta egy olyan gép felépítését, amelyben a program és az adatok ugyanabban a memóriában tárolódnak. A kettes számrendszer használata, a soros utasítás-végrehajtás és a központi vezérlőegység azóta is szinte minden számítógép alapja. Ezt a felépítést ma Neumann-architektúrának nevezik.")),
]

THINGS = [
    ("Gulyásleves", dict(field="magyar konyha", year="1800", place="Alföld"),
     "'''Gulyásleves''' (röviden '''gulyás''') a magyar konyha egyik legismertebb étele, marhahúsból, burgonyából, hagymából és pirospaprikából készülő sűrű leves. Nevét a marhapásztorokról, a gulyásokról kapta, akik bográcsban főzték a szabad ég alatt.",
     ("Elkészítése", "A hagymát zsíron üvegesre pirítjuk, majd rászórjuk a pirospaprikát, és hozzáadjuk a kockára vágott húst. Kevés vízzel, köménnyel és fokhagymával lassan pároljuk, amíg a hús majdnem megpuhul. Ezután jön a burgonya, a sárgarépa és a petrezselyemgyökér, végül a csipetke. Egy jó bográcsgulyás elkészítése kb. két-három órát vesz igénybe.")),
    ("Rubik-kocka", dict(field="logikai játék", year="1974", place="Budapest"),
     "'''Rubik-kocka''' Rubik Ernő magyar építész és szobrász által 1974-ben feltalált háromdimenziós logikai játék. A kocka minden oldala kilenc színes négyzetből áll, a cél az, hogy minden oldal egyszínű legyen.",
     ("Versenyek", "A kocka gyors kirakása, a speedcubing, önálló sportággá vált. Az első világbajnokságot 1982-ben Budapesten rendezték, amelyet egy amerikai diák nyert kb. 23 másodperces idővel. A mai rekordok három és fél másodperc körül járnak, a versenyzők pedig bekötött szemmel, egy kézzel vagy lábbal is kirakják a kockát.")),
    ("Tokaji aszú", dict(field="borászat", year="1630", place="Tokaj-Hegyalja"),
     "'''Tokaji aszú''' a Tokaj-hegyaljai borvidék nemesrothadásos, aszúsodott szőlőszemekből készülő édes bora. XIV. Lajos francia királynak tulajdonított mondás szerint „a borok királya, a királyok bora”.",
     ("Puttonyszám", "Az aszú édességét hagyományosan puttonyszámmal jelölték: azt mutatta meg, hány puttony aszúszemet adtak egy gönci hordó musthoz. A mai szabályozás szerint az aszú legalább 120 gramm maradékcukrot tartalmaz literenként. A bor hosszú érlelés után is megőrzi frissességét, mert savai ellensúlyozzák az édességet.")),
    ("Magyar nyelv", dict(field="nyelvészet", year="896", place="Kárpát-medence"),
     "'''Magyar nyelv''' az uráli nyelvcsalád finnugor ágába tartozó nyelv, amelyet kb. tizenhárom millióan beszélnek, elsősorban Magyarországon és a szomszédos országokban. Ragozó nyelv: a szavakhoz toldalékok sorát illeszti.",
     ("Hangrendszer", "A magyar nyelvben tizennégy magánhangzó van, köztük az ő és az ű, amelyek más nyelvekben ritkák. A hangrend fontos szerepet játszik: a toldalékok magánhangzója a szótő magánhangzóihoz igazodik, például ház-ban, de kert-ben. Az ''Árvíztűrő tükörfúrógép'' kifejezés minden ékezetes betűt tartalmaz, ezért a nyomdászok és programozók kedvelt próbamondata.")),
    ("Országház", dict(field="építészet", year="1904", place="Budapest"),
     "'''Országház''' Magyarország Országgyűlésének otthona a Duna pesti partján, Steindl Imre tervei alapján épült neogótikus stílusban. Az ország legnagyobb épülete: kb. 268 méter hosszú, kupolája 96 méter magas.",
     ("A Szent Korona", "2000. január 1-je óta az Országház kupolacsarnokában őrzik a Szent Koronát és a koronázási jelvényeket. A csarnokot díszőrség vigyázza, az őrségváltás a látogatók kedvelt látványossága. Az épület termeiben kb. 40 kilogramm aranyat használtak fel díszítésre.")),
    ("Széchenyi lánchíd", dict(field="hídépítés", year="1849", place="Budapest"),
     "'''Széchenyi lánchíd''' a Duna első állandó hídja Budapesten, amely Pestet és Budát köti össze. Tervezője az angol William Tierney Clark, építésvezetője a skót Adam Clark volt; a hidat 1849-ben adták át a forgalomnak.",
     ("Felújítás", "A második világháborúban a visszavonuló német csapatok 1945. január 18-án felrobbantották, a hidat 1949-ben, száz évvel az első átadás után építették újjá. A legutóbbi teljes felújítás 2021 és 2023 között zajlott, ekkor kb. két évig csak gyalogosan lehetett átkelni rajta.")),
    ("Fotoszintézis", dict(field="biológia", year="1779", place="Föld"),
     "'''Fotoszintézis''' az a folyamat, amelynek során a növények, az algák és egyes baktériumok a fény energiáját felhasználva szén-dioxidból és vízből szerves anyagot, szőlőcukrot állítanak elő, miközben oxigén szabadul fel.",
     ("A folyamat lépései", "A fényszakaszban a klorofill elnyeli a fényt, a víz bomlik, és ATP, valamint NADPH keletkezik. A sötétszakaszban, a Calvin-ciklusban ezek felhasználásával a szén-dioxid szerves vegyületekbe épül be. Egy nagyobb fa nyáron naponta több száz liter vizet párologtat el, és jelentős mennyiségű oxigént termel.")),
    ("Vasút", dict(field="közlekedés", year="1846", place="Pest"),
     "'''Vasút''' sínen haladó járművekkel lebonyolított közlekedési mód. Magyarország első gőzmozdonyos vasútvonala 1846. július 15-én nyílt meg Pest és Vác között; ma a hazai vasúthálózat hossza kb. 7600 kilométer.",
     ("A MÁV", "A Magyar Államvasutakat 1868-ban alapították. A Baross Gábor közlekedési miniszter nevéhez fűződő zónatarifa olcsóvá tette az utazást, és néhány év alatt megsokszorozta az utasok számát. A Keleti pályaudvar csarnoka 1884-ben készült el, akkor Európa egyik legkorszerűbb állomása volt.")),
    ("Könyvtár", dict(field="művelődés", year="1802", place="Pest"),
     "'''Könyvtár''' olyan intézmény, amely dokumentumokat – könyveket, folyóiratokat, kéziratokat, hang- és képfelvételeket – gyűjt, feldolgoz, megőriz és az olvasók számára hozzáférhetővé tesz.",
     ("Az Országos Széchényi Könyvtár", "Magyarország nemzeti könyvtárát gróf Széchényi Ferenc alapította 1802-ben, amikor kb. tizenötezer nyomtatványt és kéziratot adományozott a nemzetnek. A könyvtár ma a budai Várban, a királyi palota F épületében működik. Feladata minden Magyarországon megjelent kiadvány gyűjtése és megőrzése, ezt kötelespéldány-szolgáltatás segíti.")),
    ("Labdarúgás", dict(field="sport", year="1897", place="Budapest"),
     "'''Labdarúgás''' két tizenegy fős csapat között játszott labdajáték, amelyben a cél a labdát az ellenfél kapujába juttatni. Magyarországon az első hivatalos mérkőzést 1897. május 9-én játszották a Millenáris sporttelepen.",
     ("Az Aranycsapat", "Az 1950-es évek magyar válogatottja, az Aranycsapat Puskás Ferenc, Kocsis Sándor, Hidegkuti Nándor és Bozsik József vezetésével hat évig szinte veretlen volt. 1953. november 25-én a londoni Wembley-stadionban 6:3-ra győzték le Angliát, amely addig otthon soha nem kapott ki kontinentális csapattól.")),
    ("Néptánc", dict(field="népművészet", year="1970", place="Erdély"),
     "'''Néptánc''' a falusi közösségek hagyományos tánca, amely nemzedékről nemzedékre öröklődik. A magyar néptánckincs rendkívül gazdag: a verbunk, a csárdás, a legényes és a karikázó csak néhány a sok táncfajta közül.",
     ("A táncházmozgalom", "Az 1970-es évek elején Budapesten indult táncházmozgalom célja az volt, hogy a városi fiatalok közvetlenül, élő zenére tanulják meg a falusi táncokat. A mozgalom Sebő Ferenc és Halmos Béla munkájával kezdődött. 2011-ben a táncház-módszer felkerült az UNESCO szellemi kulturális örökségének listájára.")),
    ("Programozási nyelv", dict(field="informatika", year="1957", place="világ"),
     "'''Programozási nyelv''' olyan mesterséges nyelv, amellyel a számítógép számára végrehajtható utasításokat lehet leírni. Az első elterjedt magas szintű nyelv, a FORTRAN 1957-ben jelent meg, azóta több ezer nyelv született.",
     ("Nyelvek csoportosítása", "A programozási nyelveket többféleképpen csoportosítják: vannak imperatív, funkcionális, logikai és objektumorientált nyelvek. A fordított nyelvek a forráskódot előre gépi kódra alakítják, az értelmezett nyelveket pedig futás közben hajtja végre egy értelmező. Sok mai nyelv, például a Python, mindkét megoldás elemeit használja.")),
    ("Éghajlat", dict(field="meteorológia", year="1900", place="Föld"),
     "'''Éghajlat''' egy adott terület időjárásának hosszú távú, jellemzően harmincéves átlaga és szélsőértékei. Magyarország éghajlata mérsékelten kontinentális: a nyár meleg, a tél hideg, a csapadék pedig évszakonként egyenetlenül oszlik el.",
     ("Rekordok", "Magyarországon a valaha mért legmagasabb hőmérséklet 41,9 °C volt, amelyet 2007. júl. 20-án Kiskunhalason jegyeztek fel. A leghidegebb napon, 1940. február 16-án Görömbölytapolcán −35 °C-ot mértek. Az éves átlagos csapadékmennyiség kb. 500–750 milliméter, a Nyugat-Dunántúlon a legtöbb.")),
    ("Hold", dict(field="csillagászat", year="1969", place="világűr"),
     "'''Hold''' a Föld egyetlen természetes kísérője, átlagosan kb. 384 400 kilométerre kering bolygónktól. Mindig ugyanazt az oldalát fordítja felénk, mert keringési és tengelyforgási ideje megegyezik.",
     ("Holdraszállás", "Az első ember 1969. július 20-án lépett a Hold felszínére az Apollo–11 küldetés során. Az Apollo-program hat sikeres leszállása során tizenkét űrhajós járt a Holdon, és kb. 382 kilogramm kőzetmintát hoztak vissza a Földre. A holdjáró egyes alkatrészeit magyar származású mérnökök is tervezték.")),
]

# Shared section paragraphs per kind, filled with each page's facts. Natural prose, with the
# abbreviations ("Dr.", "kb.", "stb.") and dates ("2021. jan. 5-én") that a Hungarian sentence
# splitter must not break on.
CITY_SECTIONS = [
    ("Földrajz", "{name} {region} vármegyében fekszik, a település határát a(z) {river} is érinti. A város területe {area} négyzetkilométer, felszíne nagyrészt sík, a környező földeken gabonát, kukoricát, zöldséget stb. termesztenek. Az éghajlat mérsékelten kontinentális, a nyár meleg és száraz, a tél általában enyhe."),
    ("Története", "Az oklevelek {name} nevét először {founded}-ben említik. A középkorban fontos vásárváros volt, amely a kereskedelmi utak mentén gyorsan gyarapodott. A török hódoltság idején lakossága megfogyatkozott, a 18. században azonban újra benépesült, és a 19. század végére modern várossá fejlődött, vasútállomással, gimnáziummal és kórházzal."),
    ("Népesség", "A legutóbbi népszámlálás szerint {name} lakossága {pop} fő. A lakosság többsége magyar, de kisebb német, szlovák, roma és román közösségek is élnek itt. A város népessége a 20. század második felében gyorsan nőtt, az ezredforduló óta azonban lassan csökken, mert sok fiatal a fővárosba vagy külföldre költözik."),
    ("Gazdaság", "{name} gazdaságában a szolgáltatások, a kereskedelem és a feldolgozóipar a legfontosabbak. A város ipari parkjaiban több száz vállalkozás működik, a legnagyobb munkaadók közé a kórház, az egyetem és néhány nemzetközi gyár tartozik. A munkanélküliség kb. három-négy százalék, ami az országos átlagnál valamivel alacsonyabb."),
    ("Kultúra", "A városnak saját színháza, múzeuma, könyvtára és hangversenyterme van. Minden év nyarán fesztivált rendeznek, amelyre az ország minden részéből érkeznek látogatók. A 2021. jan. 5-én újranyitott városi múzeum kiállításai a régió történetét mutatják be a régészeti leletektől a 20. század tárgyi emlékeiig."),
    ("Oktatás", "{name} fontos oktatási központ: általános és középiskolái mellett felsőoktatási intézmény is működik itt. A legrégebbi gimnázium több száz éves múltra tekint vissza, falai között tanult Dr. Kovács Pál, a város egykori polgármestere is. A diákok száma a tanév során kb. tízezerrel növeli a város lakosságát."),
    ("Közlekedés", "A várost autópálya és főút köti össze a fővárossal, a vasútállomásról óránként indulnak vonatok Budapest felé. A helyi közlekedést autóbuszok, egyes városokban villamosok és trolibuszok is biztosítják. Az utóbbi években több kilométernyi kerékpárút épült, így a belváros kerékpárral is könnyen bejárható."),
]

NATURE_SECTIONS = [
    ("Földrajz", "{name} a(z) {source} térségében kezdődik, és a táj arculatát évezredek óta meghatározza. Kiterjedése kb. {length} kilométer, a vízgyűjtő és a környező terület {countries} ország területét érinti. A tájat hol szelíd dombok, hol lapos síkságok, hol meredek völgyek tagolják."),
    ("Élővilág", "A terület növény- és állatvilága rendkívül gazdag. Itt él a szürke gém, a kócsag, a vidra és számos védett halfaj, az erdőkben pedig tölgy, gyertyán és bükk nő. A természetvédelmi szakemberek kb. kétszáz madárfajt figyeltek meg, közülük több tucat rendszeresen itt is fészkel."),
    ("Természetvédelem", "A legértékesebb részek ma védett területnek számítanak, a nemzeti park igazgatósága felügyeli őket. A látogatók tanösvényeken, kilátókból és kijelölt túraútvonalakon ismerhetik meg a tájat. Tilos a védett növények szedése, a tűzrakás, a szemetelés stb., a szabályok megszegőit bírsággal sújthatják."),
    ("Kutatás", "A terület kutatása a 19. században kezdődött, amikor Dr. Herman Ottó és munkatársai leírták a táj madárvilágát és halászatát. Azóta rendszeres méréseket végeznek: vizsgálják a víz minőségét, a talaj összetételét és az élőlények számának változását. Az eredményeket évente jelentésben teszik közzé."),
    ("Idegenforgalom", "A(z) {kind_word} évente több százezer látogatót vonz. Nyáron a vízi túrák, a kerékpározás és a horgászat a legnépszerűbb, ősszel pedig a szüreti rendezvények és a gombászás. A 2021. jan. 5-én bejelentett fejlesztési program keretében új pihenőhelyek, kikötők és kerékpárutak épültek."),
    ("A név eredete", "A név eredetét több elmélet is magyarázza. Egyes nyelvészek szerint ősi, a honfoglalás előtti időkből származik, mások szláv vagy latin eredetűnek tartják. Az első írásos említés egy 11. századi oklevélben maradt fenn, ahol a határ leírásakor tesznek róla említést."),
]

PERSON_SECTIONS = [
    ("Élete", "{name} {born}-ben született {place} településen. Apja kereskedő volt, aki nagy gondot fordított fia neveltetésére, ezért több iskolában is tanult. Fiatalon sokat utazott, megismerte az ország különböző tájait és az európai nagyvárosok szellemi életét. Ezek a tapasztalatok egész pályáját meghatározták."),
    ("Munkássága", "Mint {job} rövid idő alatt országos hírnevet szerzett. Legismertebb alkotása {work}, amely ma is a magyar kultúra része. Munkái nemcsak hazájában, hanem külföldön is nagy hatást gyakoroltak; kortársai közül sokan tanítványának vagy követőjének vallották magukat."),
    ("Magánélete", "Házasságát barátai és rokonai körében kötötte, felesége egész életében támogatta munkájában. Leveleiből tudjuk, hogy szerette a természetet, szívesen kirándult a hegyekben, és rendszeresen olvasott latin, német, francia stb. nyelvű műveket. Gyermekei közül egy követte apja pályáján."),
    ("Halála és emlékezete", "{name} {died}-ben hunyt el. Temetésén nagy tömeg vett részt, a sírjánál Dr. Szabó Lajos mondott búcsúbeszédet. Nevét ma utcák, terek, iskolák és díjak őrzik, szobrai az ország számos városában állnak. Születésének évfordulóján minden évben megemlékezéseket tartanak."),
    ("Kortársai véleménye", "A kortársak sokféleképpen ítélték meg. Egyesek a kor legnagyobb tehetségének tartották, mások túlzottan merésznek és újítónak. Egy 1900 körül írt visszaemlékezés szerint „mindig a holnapról beszélt, amikor mások még a tegnapon vitatkoztak”. Hatása az utókor számára vitathatatlan."),
    ("Emlékezete", "Emlékére múzeumot rendeztek be szülőházában, ahol személyes tárgyait, kéziratait és leveleit mutatják be. Az intézmény 2021. jan. 5-én felújítás után nyitotta meg újra kapuit. A kiállítást évente kb. harmincezer látogató tekinti meg, köztük sok iskolai csoport."),
    ("Művei", "Életművét ma is kiadják, tanulmányozzák és előadják. A teljes kritikai kiadás több tucat kötetből áll, a munka Dr. Nagy Ilona irányításával készült. Műveit angol, német, francia, olasz, japán stb. nyelvre fordították, és a világ számos egyetemén tanítják."),
]

THING_SECTIONS = [
    ("Története", "A(z) {field} e területének története {year} körül kezdődött, amikor először írtak róla részletesebben. A 19. században az érdeklődés gyorsan nőtt, a 20. század második felében pedig a téma a nagyközönség számára is ismertté vált. Ma újságcikkek, könyvek, filmek stb. foglalkoznak vele."),
    ("Magyarországon", "Magyarországon különösen nagy hagyománya van, amelyre a(z) {place} példája is jól mutat. A témával foglalkozó egyesület Dr. Horváth Ágnes kezdeményezésére alakult meg, és ma több ezer tagot számlál. Az egyesület 2021. jan. 5-én nyilvános adatbázist indított, amelyben kb. tízezer tétel kereshető."),
    ("Kutatása", "A(z) {field} kutatói az elmúlt évtizedekben sok új eredményt értek el. Az egyetemeken önálló tanszékek és kutatócsoportok foglalkoznak a témával, a legfontosabb eredményeket nemzetközi folyóiratokban teszik közzé. A fiatal kutatók ösztöndíjak segítségével külföldi intézetekben is tanulhatnak."),
    ("Érdekességek", "Kevesen tudják, hogy a téma első magyar nyelvű leírása egy 18. századi kalendáriumban jelent meg. Egy 1990-es felmérés szerint a megkérdezettek kb. kétharmada hallott már róla, de csak minden tizedik tudta pontosan elmagyarázni. Azóta az ismeretterjesztő műsoroknak köszönhetően sokat javult a helyzet."),
    ("Gazdasági jelentősége", "A téma gazdasági jelentősége is számottevő: több ezer embernek ad munkát, és jelentős bevételt hoz az országnak. Az exportpiacok közül Németország, Ausztria és Olaszország a legfontosabbak. A szakértők szerint a következő évtizedben a kereslet tovább nő, ezért új beruházásokra lesz szükség."),
    ("Oktatás", "Az iskolákban a(z) {field} alapjait már az általános iskola felső tagozatán tanítják. A tanárok gyakran kísérletekkel, kirándulásokkal és múzeumlátogatással teszik szemléletessé az anyagot. A legjobb diákok országos versenyeken mérhetik össze tudásukat, amelyeket minden évben tavasszal rendeznek meg."),
    ("Fogalmak", "A szakirodalom számos fogalmat használ, amelyeket nem mindig könnyű elkülöníteni. Egyes szerzők tágabb, mások szűkebb értelemben használják ugyanazt a kifejezést. A Magyar értelmező kéziszótár szerint a szó a köznyelvben is elterjedt, jelentése azonban a szaknyelvben pontosabb."),
]

INFOBOX_KEYS = {
    "region": "vármegye", "river": "folyó", "founded": "első említés", "pop": "népesség",
    "area": "terület", "kind_word": "típus", "length": "hossz", "source": "forrás",
    "countries": "országok", "job": "foglalkozás", "born": "születési év", "died": "halálozási év",
    "place": "hely", "work": "fő műve", "field": "terület", "year": "év",
}

INFOBOX = {
    "city": "Település infobox", "nature": "Földrajzi infobox",
    "person": "Személy infobox", "thing": "Infobox",
}


# ---------------------------------------------------------------------------------------------
# Page builders

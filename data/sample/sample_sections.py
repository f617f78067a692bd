"""The section paragraphs shared by pages of one kind, and the names that become internal links
(data/sample/make_sample.py fills and links them). All text was written for the project.

A shared section is a title and a list of sentences; each sentence is a list of phrasings, one
of which a page's seeded RNG picks. Every phrasing names the page's own facts ({name}, {loc},
{adj}, {short}, {lc}, {friend}, ...), so no sentence of the dump repeats another one (make_sample.py
checks it). Facts in [[...]] become internal links; make_sample.py keeps the first link to a
target in an article and turns the later ones into plain text, as Wikipedia's editors do.

Fill-ins beside the page's facts: {Name}-style keys are the fact with a capital first letter,
{date} a date drawn by the page's RNG such as "2019. márc. 15-én", "a(z) X" the right article for X,
"1823-ban" the right suffix for the number.
"""
from __future__ import annotations

CITY_SECTIONS = [
    ("Földrajz", [
        ["{name} [[{county}]] egyik legfontosabb települése, határát a(z) [[{river}]] is érinti.",
         "A(z) [[{river}]] mentén fekvő {name} [[{county}]] meghatározó városa.",
         "{name} a(z) [[{river}]] partján terül el, és [[{county}]] legnépesebb települései közé tartozik."],
        ["{name} területe {area} négyzetkilométer, a környező települések közül [[{neighbor}]] kapcsolódik hozzá a legszorosabban.",
         "A(z) {area} négyzetkilométeres {adj} határban szántók, kertek, gyümölcsösök stb. váltják egymást."],
        ["Éghajlata mérsékelten kontinentális: {loc} a nyár meleg és száraz, a tél általában enyhe.",
         "{Loc} a nyári hőség gyakran meghaladja a 30 fokot, télen viszont ritkán marad meg sokáig a hó.",
         "A(z) {adj} éghajlat mérsékelten kontinentális, a csapadék nagy része május és július között hull."],
    ]),
    ("Története", [
        ["Az oklevelek {name} nevét először {founded}-ben említik.",
         "{name} első írásos említése {founded}-ből való, bár a környéket már jóval korábban lakták.",
         "A régészek szerint {name} helyén már a honfoglalás előtt is éltek, a neve azonban csak {founded}-ben bukkan fel az oklevelekben."],
        ["A középkorban {name} fontos vásárváros volt, amely a kereskedelmi utak mentén gyorsan gyarapodott.",
         "A középkori {adj} vásárok messze földről vonzották a kereskedőket, akik posztót, sót, bort stb. hoztak magukkal."],
        ["A török hódoltság idején {name} lakossága megfogyatkozott, a 18. században azonban a város újra benépesült.",
         "A 17. század háborúi {name} fejlődését is megakasztották, de a béke visszatérése után a város gyorsan talpra állt."],
        ["A 19. század végére {name} modern várossá fejlődött, vasútállomással, gimnáziummal és kórházzal.",
         "A kiegyezés utáni évtizedekben {loc} épült fel a városháza, a kórház és a legtöbb iskola."],
    ]),
    ("Népesség", [
        ["A legutóbbi népszámlálás szerint {name} lakossága {pop} fő.",
         "{name} lakossága a legutóbbi népszámláláskor {pop} fő volt."],
        ["{Loc} a lakosság többsége magyar, de kisebb német, szlovák, roma és román közösségek is élnek a városban.",
         "A(z) {adj} lakosok többsége magyarnak vallja magát, emellett német, roma, szlovák stb. nemzetiségűek is élnek itt."],
        ["{name} népessége a 20. század második felében gyorsan nőtt, az ezredforduló óta azonban lassan csökken.",
         "Az 1960-as és 1970-es években {loc} sok új lakótelep épült, mert a város népessége gyorsan gyarapodott.",
         "Az ezredforduló óta {name} népessége lassan fogy, mert sok fiatal külföldön keres munkát."],
    ]),
    ("Gazdaság", [
        ["{name} gazdaságában a szolgáltatások, a kereskedelem és a feldolgozóipar a legfontosabbak.",
         "A(z) {adj} gazdaság legfontosabb ágai ma a szolgáltatások, a kereskedelem és a feldolgozóipar."],
        ["{name} ipari parkjaiban több száz vállalkozás működik, a legnagyobb munkaadók közé a(z) [[{univ}]] is tartozik.",
         "A legnagyobb {adj} munkaadók közé a kórház, a(z) [[{univ}]] és néhány nemzetközi gyár tartozik."],
        ["{Loc} a munkanélküliség kb. három-négy százalék, ami az országos átlagnál valamivel alacsonyabb.",
         "A(z) {adj} munkanélküliségi ráta az elmúlt években kb. négy százalék körül alakult."],
    ]),
    ("Kultúra", [
        ["{name} kulturális életének központja a(z) [[{theatre}]], amelynek előadásaira a környező településekről is sokan járnak.",
         "A(z) [[{theatre}]] a(z) {adj} kulturális élet egyik legfontosabb helyszíne."],
        ["{name} legismertebb műemléke a(z) [[{landmark}]], amelyet évente több tízezer turista keres fel.",
         "A(z) [[{landmark}]] ma is {name} egyik jelképe, képe számos képeslapon és bélyegen szerepel."],
        ["A(z) {adj} városi múzeum 2021. jan. 5-én nyitotta meg újra kapuit, kiállításai a régió történetét mutatják be.",
         "{Loc} minden év nyarán fesztivált rendeznek, amelyre az ország minden részéből érkeznek látogatók.",
         "A(z) {adj} könyvtár {date} új olvasótermet avatott, ahol régi térképek, oklevelek stb. is megtekinthetők."],
    ]),
    ("Oktatás", [
        ["{name} fontos oktatási központ: általános és középiskolái mellett itt működik a(z) [[{univ}]] is.",
         "A(z) [[{univ}]] hallgatói nagyban hozzájárulnak ahhoz, hogy {name} élénk diákváros legyen."],
        ["A(z) {adj} gimnázium több száz éves múltra tekint vissza, falai között tanult Dr. Kovács Pál, a város egykori polgármestere is.",
         "{name} legrégebbi középiskolájában egykor Dr. Kovács Pál, a későbbi polgármester is tanult."],
        ["A diákok száma a tanév során kb. tízezerrel növeli {name} lakosságát.",
         "Tanév közben a(z) {adj} utcákon kb. tízezerrel több fiatal fordul meg, mint nyáron."],
    ]),
    ("Megközelítése", [
        ["{name} autópályán és főúton is jól megközelíthető, a vasútállomásról rendszeresen indulnak vonatok [[{neighbor}]] felé.",
         "A(z) {adj} vasútállomásról óránként indulnak vonatok, a legközelebbi nagyobb település, {neighbor} negyedóra alatt elérhető."],
        ["A helyi közlekedést {loc} autóbuszok, egyes vonalakon trolibuszok vagy villamosok is biztosítják.",
         "A(z) {adj} tömegközlekedés gerincét az autóbuszvonalak adják, a belvárosban sok utca csak gyalogosan járható."],
        ["Az utóbbi években {loc} több kilométernyi kerékpárút épült, így a belváros kerékpárral is könnyen bejárható.",
         "{date} adták át {name} legújabb kerékpárútját, amely a belvárost a(z) {river} partjával köti össze."],
    ]),
]

NATURE_SECTIONS = [
    ("Földrajz", [
        ["A(z) {name} és a(z) [[{source}]] sorsa évezredek óta összefonódik.",
         "A(z) {name} vidékének vízrajzát és tájképét nagyban meghatározza a(z) [[{source}]] közelsége."],
        ["A(z) {name} kiterjedése kb. {length} kilométer, és {countries} ország területét érinti.",
         "Nagyjából {length} kilométeres hosszával a(z) {name} a hazai {kinds} közül is kiemelkedik."],
        ["{Loc} a tájat hol szelíd dombok, hol lapos síkságok, hol meredek völgyek tagolják.",
         "A(z) {name} környékén a táj hol lankás, hol meredek, a völgyekben pedig apró falvak bújnak meg."],
    ]),
    ("Élővilág", [
        ["A(z) {name} növény- és állatvilága rendkívül gazdag, legismertebb lakója talán a(z) [[{animal}]].",
         "A(z) [[{animal}]] {loc} különösen gyakori, a természetbarátok kedvelt megfigyelési célpontja."],
        ["{Loc} több tucat védett növény- és állatfaj él, köztük a szürke gém, a vidra és a kócsag.",
         "A(z) {name} élővilágát a szakemberek kb. kétszáz madárfaj megfigyelésével dokumentálták."],
        ["{Loc} az erdőkben tölgy, gyertyán, bükk stb. nő, a nedvesebb helyeken fűz és nyár.",
         "A(z) {name} vidékének ligeterdeit a nyári hónapokban a szúnyogok miatt kevesen keresik fel."],
    ]),
    ("Természetvédelem", [
        ["A(z) {name} legértékesebb részeit ma a(z) [[{park}]] igazgatósága felügyeli.",
         "A(z) [[{park}]] létrehozása óta a(z) {name} több része is fokozottan védett terület."],
        ["A látogatók {loc} tanösvényeken, kilátókból és kijelölt túraútvonalakon ismerhetik meg a tájat.",
         "A(z) {name} természeti értékeit kilátók, tanösvények és erdei iskolák mutatják be a látogatóknak."],
        ["{Loc} tilos a védett növények szedése, a tűzrakás, a szemetelés stb., a szabályok megszegőit bírsággal sújthatják.",
         "A(z) {park} őrei {date} kezdték meg a(z) {name} legérzékenyebb részeinek ellenőrzését drónokkal."],
    ]),
    ("Kutatás", [
        ["A(z) {name} kutatása a 19. században kezdődött, amikor Dr. [[Herman Ottó]] és munkatársai leírták a táj madárvilágát.",
         "Az első tudományos leírást a(z) {name} élővilágáról [[Herman Ottó]] köre készítette a 19. század végén."],
        ["Azóta {loc} rendszeres méréseket végeznek: vizsgálják a víz minőségét, a talaj összetételét és az élőlények számát.",
         "A(z) {name} vizeinek és talajának állapotát ma automata mérőállomások figyelik."],
        ["A(z) {name} kutatásának eredményeit a(z) [[{park}]] évente jelentésben teszi közzé.",
         "A legutóbbi, {date} bemutatott jelentés szerint a(z) {name} élővilága az aszályos évek ellenére is stabil."],
    ]),
    ("Idegenforgalom", [
        ["A(z) {name} évente több százezer látogatót vonz, sokan közülük [[{town}]] felől érkeznek.",
         "{Loc} a nyári hónapokban sokszorosára nő a turisták száma, a legtöbb szálláshely [[{town}]] környékén található."],
        ["{Loc} nyáron a vízi túrák, a kerékpározás és a horgászat a legnépszerűbb.",
         "A(z) {name} vidékén ősszel a szüreti rendezvények és a gombászás vonzza a legtöbb vendéget."],
        ["A 2021. jan. 5-én bejelentett fejlesztési program keretében {loc} új pihenőhelyek, kikötők és kerékpárutak épültek.",
         "{date} adták át a(z) {name} legújabb kilátóját, amelyről tiszta időben {town} is látszik."],
    ]),
    ("A név eredete", [
        ["A(z) {name} név eredetét több elmélet is magyarázza.",
         "Hogy honnan ered a(z) {name} név, arról a nyelvészek ma is vitatkoznak."],
        ["Egyes nyelvészek szerint a(z) {name} szó ősi, honfoglalás előtti eredetű, mások szláv vagy latin átvételnek tartják.",
         "A(z) {name} név egyik magyarázata szerint a szó egy régi török nyelvből került a magyarba."],
        ["A(z) {name} első írásos említése egy 11. századi oklevélben maradt fenn, a birtokhatárok leírásában.",
         "A középkori oklevelek a(z) {name} nevét többféle írásmóddal őrizték meg."],
    ]),
]

PERSON_SECTIONS = [
    ("Élete", [
        ["{name} {born}-ben született, szülőhelye [[{place}]].",
         "{name} [[{place}]] szülötte, {born}-ben jött a világra."],
        ["Apja nagy gondot fordított fia neveltetésére, ezért {short} több iskolában is tanult.",
         "Gyermekkorában {short} családja sokat költözött, így a fiú több iskolát is kijárt."],
        ["Fiatalon {short} sokat utazott, és megismerte az európai nagyvárosok szellemi életét; később főként [[{city}|{city_loc}]] dolgozott.",
         "Pályája legtermékenyebb éveit [[{city}|{city_loc}]] töltötte, ahol {short} hamar a közélet ismert alakja lett."],
    ]),
    ("Munkássága", [
        ["Mint {job} {name} rövid idő alatt országos hírnevet szerzett.",
         "{short} {job}ként már fiatalon országos hírnevet szerzett."],
        ["{name} legismertebb alkotása {work}, amely ma is a magyar kultúra része.",
         "A kortársak és az utókor szemében is {work} lett {short} legfontosabb eredménye."],
        ["Kortársai közül különösen [[{friend}]] becsülte {short} munkásságát.",
         "{short} és [[{friend}]] kapcsolata sokat foglalkoztatta a kortársakat."],
    ]),
    ("Magánélete", [
        ["{short} házasságát barátai és rokonai körében kötötte, felesége egész életében támogatta munkájában.",
         "{short} magánéletéről keveset tudunk, leveleiből azonban kiderül, hogy a család volt a legfontosabb számára."],
        ["Leveleiből tudjuk, hogy {short} szívesen kirándult a hegyekben, és latin, német, francia stb. nyelvű műveket olvasott.",
         "Szabadidejében {short} szívesen sétált, lovagolt vagy a kertjében dolgozott."],
        ["{short} {city_loc} lakott házát ma emléktábla jelöli.",
         "{Friend} visszaemlékezése szerint {short} otthona mindig nyitva állt a barátok előtt."],
    ]),
    ("Halála és emlékezete", [
        ["{name} {died}-ben hunyt el.",
         "{short} {died}-ben halt meg, halála mélyen megrendítette a kortársakat."],
        ["{short} temetésén nagy tömeg vett részt, a sírjánál Dr. Szabó Lajos mondott búcsúbeszédet.",
         "A(z) {died}-ben tartott temetésen a(z) [[{inst}]] tagjai is búcsút vettek tőle."],
        ["{short} nevét ma utcák, terek, iskolák és díjak őrzik, szobrai az ország számos városában állnak.",
         "Az ország számos városában áll {short} szobra, nevét utcák, iskolák stb. viselik."],
    ]),
    ("Kortársai véleménye", [
        ["A kortársak sokféleképpen ítélték meg {name} munkásságát.",
         "{short} megítélése már életében is megosztotta a közvéleményt."],
        ["[[{friend}]] szerint {short} a kor legnagyobb tehetsége volt, mások viszont túlzottan merésznek tartották.",
         "Egyesek {short} alakjában a kor legnagyobb tehetségét látták, [[{friend}]] azonban kritikusabban nyilatkozott róla."],
        ["Egy 1900 körül írt visszaemlékezés szerint {short} „mindig a holnapról beszélt, amikor mások még a tegnapon vitatkoztak”.",
         "A(z) [[{inst}]] {date} rendezett emlékülésén {short} hatását a magyar kultúra egészére kiterjedőnek nevezték."],
    ]),
    ("Emlékezete", [
        ["{short} emlékére múzeumot rendeztek be szülőházában, ahol személyes tárgyait, kéziratait és leveleit mutatják be.",
         "Szülőhelye, [[{place}]] ma emléktáblával őrzi {short} emlékét."],
        ["A(z) {name} Emlékház 2021. jan. 5-én felújítás után nyitotta meg újra kapuit.",
         "A(z) {short} életét bemutató kiállítás {date} nyílt meg újra, felújítás után."],
        ["A(z) {short}-kiállítást évente kb. harmincezer látogató tekinti meg, köztük sok iskolai csoport.",
         "A(z) {short} tárgyi emlékeit bemutató gyűjteményt főleg iskolai csoportok keresik fel."],
    ]),
    ("Művei", [
        ["{name} életművét ma is kiadják, tanulmányozzák és előadják.",
         "{short} munkái ma is elérhetők, a legfontosabbak több kiadásban is megjelentek."],
        ["{short} műveinek kritikai kiadása Dr. Nagy Ilona irányításával készült, és több tucat kötetből áll.",
         "A(z) [[{inst}]] gondozza {short} kéziratos hagyatékának jelentős részét."],
        ["{short} műveit angol, német, francia, olasz, japán stb. nyelvre fordították.",
         "Nemcsak {work} ismert külföldön: {short} hatása a világ számos egyetemén érezhető."],
    ]),
]

THING_SECTIONS = [
    ("Története", [
        ["A(z) {lc} magyarországi történetében {year} fontos évszám.",
         "A(z) {lc} történetének egyik fordulópontja {year} volt."],
        ["A 19. században a(z) {lc} iránti érdeklődés gyorsan nőtt, a 20. században pedig a nagyközönség is megismerte.",
         "A 20. század második felében a(z) {lc} újságcikkekben, könyvekben, filmekben stb. is egyre gyakrabban szerepelt."],
        ["A(z) {lc} hazai történetének egyik kulcsszereplője [[{expert}]] volt.",
         "Sokan [[{expert}]] nevéhez kötik a(z) {lc} magyarországi hírnevét."],
    ]),
    ("Magyarországon", [
        ["Magyarországon a(z) {lc} különösen nagy hagyományra tekint vissza, ezt [[{expert}]] munkássága is jól mutatja.",
         "A(z) {lc} hazai kedvelői egyesületet alapítottak, amely ma több ezer tagot számlál."],
        ["A(z) {lc} kutatóit tömörítő egyesület Dr. Horváth Ágnes kezdeményezésére alakult meg.",
         "Dr. Horváth Ágnes vezetésével {date} indult el a(z) {lc} hazai emlékeit feldolgozó program."],
        ["Az egyesület 2021. jan. 5-én nyilvános adatbázist indított, amelyben kb. tízezer, a(z) {lc} témájához kapcsolódó tétel kereshető.",
         "A(z) {lc} témájú nyilvános adatbázisban ma kb. tízezer tétel kereshető."],
    ]),
    ("Kutatása", [
        ["A(z) {field} kutatói a(z) {lc} vizsgálatában az elmúlt évtizedekben sok új eredményt értek el.",
         "A(z) {lc} kutatása ma a(z) {field} egyik legdinamikusabban fejlődő területe."],
        ["Az egyetemeken önálló kutatócsoportok foglalkoznak a(z) {lc} kérdéseivel, eredményeiket nemzetközi folyóiratokban teszik közzé.",
         "[[{expert}]] munkássága óta a(z) {lc} a hazai kutatók kedvelt témája."],
        ["A(z) {lc} iránt érdeklődő fiatal kutatók ösztöndíjak segítségével külföldi intézetekben is tanulhatnak.",
         "A(z) [[Magyar Tudományos Akadémia]] {date} konferenciát rendezett a(z) {lc} legújabb kutatási eredményeiről."],
    ]),
    ("Érdekességek", [
        ["Kevesen tudják, hogy a(z) {lc} első magyar nyelvű leírása egy 18. századi kalendáriumban jelent meg.",
         "A(z) {lc} a magyar irodalomban is megjelenik, több népszerű vers és novella témája."],
        ["Egy 1990-es felmérés szerint a megkérdezettek kb. kétharmada tudott valamit a(z) {lc} témájáról, de csak minden tizedik tudott részletesen beszélni róla.",
         "Egy közvélemény-kutatásban a(z) {lc} a legismertebb magyar vonatkozású témák között szerepelt."],
        ["Az ismeretterjesztő műsoroknak köszönhetően a(z) {lc} az utóbbi években sokkal ismertebb lett.",
         "A(z) {lc} témájában készült dokumentumfilmet {date} mutatták be a közszolgálati televízióban."],
    ]),
    ("Gazdasági jelentősége", [
        ["A(z) {lc} gazdasági jelentősége is számottevő: a kapcsolódó ágazatok több ezer embernek adnak munkát.",
         "A(z) {lc} körül kialakult ágazat ma több ezer embernek ad munkát Magyarországon."],
        ["A(z) {lc} kapcsán az exportpiacok közül Németország, Ausztria és Olaszország a legfontosabbak.",
         "A(z) {lc} témájához kötődő termékek legnagyobb vásárlói Németországban, Ausztriában és Olaszországban vannak."],
        ["A szakértők szerint a következő évtizedben a(z) {lc} iránti kereslet tovább nő.",
         "[[{expert}]] példája nyomán ma is sok vállalkozás épít a(z) {lc} népszerűségére."],
    ]),
    ("Oktatás", [
        ["Az iskolákban a(z) {lc} alapjait már az általános iskola felső tagozatán tanítják.",
         "A(z) {lc} a tantervben is szerepel, általában a(z) {field} témakörén belül."],
        ["A tanárok a(z) {lc} témáját gyakran kirándulásokkal és múzeumlátogatással teszik szemléletessé.",
         "A(z) {lc} tanításához több tankönyv és digitális tananyag is készült."],
        ["A(z) {lc} témájában minden tavasszal országos tanulmányi versenyt rendeznek.",
         "A(z) {field} iránt érdeklődő diákok a(z) {lc} témájában országos versenyeken mérhetik össze tudásukat."],
    ]),
    ("Fogalmak", [
        ["A(z) {lc} szakirodalma számos fogalmat használ, amelyeket nem mindig könnyű elkülöníteni.",
         "A(z) {lc} leírásában használt szakszavak egy része a(z) {field} más területein is előfordul."],
        ["Egyes szerzők tágabb, mások szűkebb értelemben használják a(z) {lc} kifejezést.",
         "A(z) {lc} fogalmát a szótárak is eltérően határozzák meg."],
        ["A Magyar értelmező kéziszótár szerint a(z) {lc} szó a köznyelvben is elterjedt, jelentése azonban a(z) {field} szaknyelvében pontosabb.",
         "[[{expert}]] szóhasználata nagyban hozzájárult ahhoz, hogy a(z) {lc} kifejezés a köznyelvben is meghonosodjon."],
    ]),
]

# Names in the page-specific prose that become internal links (first mention in an article):
# the text as written -> the article it links to (piped where they differ, as in "Kodály
# Zoltánnal" -> [[Kodály Zoltán|Kodály Zoltánnal]]).
LINKS = {
    # people
    **{n: n for n in (
        "Lechner Lajos", "Péchy Mihály", "II. Rákóczi Ferenc", "Dobó István", "Gárdonyi Géza",
        "Lechner Ödön", "Pártos Gyula", "Kodály Zoltán", "Bem József", "Thomán István",
        "Bartók Béla", "Dohnányi Ernő", "Kossuth Lajos", "Puskás Ferenc", "Kocsis Sándor",
        "Hidegkuti Nándor", "Bozsik József", "Sebő Ferenc", "Halmos Béla", "Rubik Ernő",
        "Steindl Imre", "William Tierney Clark", "Adam Clark", "Széchényi Ferenc", "Baross Gábor",
        "Vásárhelyi Pál", "Széchenyi István", "Arany János", "Petőfi Sándor", "Liszt Ferenc",
        "Jókai Mór", "Neumann János", "Semmelweis Ignác", "Szent-Györgyi Albert")},
    "Nagy Lajos": "I. Lajos magyar király", "Ferenc József": "I. Ferenc József magyar király",
    "Kodály Zoltánnal": "Kodály Zoltán", "XIV. Lajos": "XIV. Lajos francia király",
    # places
    **{n: n for n in (
        "Magyarország", "Tisza", "Duna", "Maros", "Mecsek", "Budapest", "Pest", "Buda", "Óbuda",
        "Vác", "Bécs", "Rába", "Rábca", "Mosoni-Duna", "Bükk", "Mátra", "Kékes", "Hámori-tó",
        "Bakony", "Balaton", "Balaton-felvidék", "Nyugat-Dunántúl", "Dél-Alföld",
        "Észak-Magyarország", "Közép-Európa", "Szeged", "Debrecen", "Pécs", "Győr", "Miskolc",
        "Eger", "Sopron", "Kecskemét", "Veszprém", "Kiskőrös", "Nagyszalonta", "Doborján",
        "Nagyszentmiklós", "Bayreuth", "New York", "Washington", "Komárom", "Woods Hole", "Tabán",
        "Döbling", "Diósgyőr", "Mátrafüred", "Galyatető", "Hortobágy", "Tiszántúl")},
    "Magyarországon": "Magyarország", "Budapesten": "Budapest", "Pozsonyt": "Pozsony",
    "Belgrádot": "Belgrád", "Bécset": "Bécs", "Szerbiában": "Szerbia", "Lillafüreden": "Lillafüred",
    "Fekete-tengerbe": "Fekete-tenger", "Kiskunhalason": "Kiskunhalas",
    "Északi-középhegységben": "Északi-középhegység", "Dunába": "Duna", "Holdon": "Hold",
    # institutions, buildings, works, things
    **{n: n for n in (
        "Magyar Tudományos Akadémia", "Kisfaludy Társaság", "Pécsi Tudományegyetem",
        "Bükki Nemzeti Park", "Hortobágyi Nemzeti Park", "Duna Gőzhajózási Társaság", "UNESCO",
        "Rajna–Majna–Duna-csatorna", "Cifrapalota", "Zsolnay Kulturális Negyed", "Országház",
        "Nemzeti Kaszinó", "Palotaszálló", "Szinva-vízesés", "Gizella-kápolna", "Andrássy út",
        "FORTRAN", "Apollo–11", "C-vitamin", "Egri csillagok", "Nemzeti dal", "Szent Korona",
        "Keleti pályaudvar", "Aranycsapat", "Sopianae", "Erzsébet híd", "Szabadság híd",
        "Zeneakadémia", "Szeleta-barlang", "István-barlang")},
    "Református Nagytemplom": "Debreceni református nagytemplom",
    "Lánchíd": "Széchenyi lánchíd", "Magyar Államvasutakat": "Magyar Államvasutak",
    "Szegedi Tudományegyetemen": "Szegedi Tudományegyetem", "Wembley-stadionban": "Wembley Stadion",
    "Python": "Python (programozási nyelv)", "Calvin-ciklusban": "Calvin-ciklus",
    "Nobel-díjat": "Nobel-díj", "Szent Koronát": "Szent Korona", "Szeleta-barlangban": "Szeleta-barlang",
    "Országos Magyar Királyi Zeneakadémia": "Zeneakadémia",
    "Pilvax kávéházból": "Pilvax kávéház", "Landerer-nyomdában": "Landerer és Heckenast",
    "segesvári csatában": "Segesvári csata", "Máramarosi-havasokban": "Máramarosi-havasok",
    "Fekete-erdőből": "Fekete-erdő", "Millenáris sporttelepen": "Millenáris Sporttelep",
    "Görömbölytapolcán": "Görömbölytapolca", "Angliát": "Anglia", "Ausztriának": "Ausztria",
    "Tűztornya": "Soproni Tűztorony", "Hitel": "Hitel (könyv)", "ATP": "Adenozin-trifoszfát",
    "Miskolctapolcai barlangfürdő": "Barlangfürdő (Miskolctapolca)", "Föld": "Föld",
    "Zsolnay porcelánmanufaktúra": "Zsolnay Porcelánmanufaktúra", "Habsburg-ház": "Habsburg-ház",
    **{n: n for n in (
        "Fehéregyháza", "Walesi bárdok", "Szondi két apródja", "Ágnes asszony", "Erzsébetváros",
        "Szépasszony-völgy", "Mátraháza", "Hídi vásár", "Európa kulturális fővárosa", "Apollo-program",
        "János vitéz", "Toldi", "A kékszakállú herceg vára", "Psalmus Hungaricus", "Az arany ember",
        "A kőszívű ember fiai", "Egy magyar nábob", "Fekete gyémántok", "Magyar rapszódiák",
        "Kiskunhalas", "Wembley-stadion", "Szeleta-barlang", "Lillafüredi Anna-barlang",
        "Rákóczi-harang", "Szinva-vízesés", "NADPH", "Nagykörút", "Németország", "Olaszország",
        "Magyar értelmező kéziszótár", "török hódoltság", "honfoglalás", "kiegyezés")},
    "Kecskeméti Képtárnak": "Kecskeméti Képtár", "Németországban": "Németország",
    "Ausztriában": "Ausztria", "Olaszországban": "Olaszország",
}
